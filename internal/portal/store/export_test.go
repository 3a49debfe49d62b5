package store

import "context"

// MigrateTo is Migrate up to the portal's step version: a database as an
// older tunecon left it, for the tests of the steps after it.
func (s *Store) MigrateTo(ctx context.Context, version int) ([]int, error) {
	return s.migrate(ctx, version)
}
