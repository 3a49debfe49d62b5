package main

import (
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/mattn/go-sqlite3"
)

const timeFormat = "2006-01-02 15:04:05" // every time, in UTC

// Subscriptions is a user's subscriptions: service name -> parameter -> value. A value stored in a user is never
// changed again: a change stores a new map.
type Subscriptions map[string]map[string]string

// user is a user in memory. Its id, email, password and grade never change.
type user struct {
	id                           int64
	email, salt, passhash, grade string
	subs                         atomic.Pointer[Subscriptions]
	// index is the user's dashboard page, rendered the first time it is asked for.
	index atomic.Pointer[[]byte]
}

func (u *user) subscriptions() Subscriptions { return *u.subs.Load() }

// state is the memory of the database's users, sessions and subscriptions. Its maps are read under mu's read
// lock and changed under its write lock, always by a writer that holds App.wmu.
type state struct {
	mu       sync.RWMutex
	byID     map[int64]*user
	byEmail  map[string]*user
	sessions map[string]*user // session token -> its user
}

func (st *state) session(token string) *user {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.sessions[token]
}

func (st *state) userByEmail(email string) *user {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.byEmail[email]
}

// load reads every user, subscription and session into a new state.
func (app *App) load() (*state, error) {
	st := &state{byID: map[int64]*user{}, byEmail: map[string]*user{}, sessions: map[string]*user{}}
	rows, err := app.db.Query("SELECT id, email, salt, passhash, grade FROM users")
	if err != nil {
		return nil, err
	}
	empty := Subscriptions{}
	for rows.Next() {
		u := &user{}
		if err := rows.Scan(&u.id, &u.email, &u.salt, &u.passhash, &u.grade); err != nil {
			rows.Close()
			return nil, err
		}
		u.subs.Store(&empty)
		st.byID[u.id] = u
		st.byEmail[u.email] = u
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	rows, err = app.db.Query("SELECT user_id, arg FROM subscriptions")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var arg string
		if err := rows.Scan(&id, &arg); err != nil {
			rows.Close()
			return nil, err
		}
		u := st.byID[id]
		if u == nil {
			continue
		}
		subs := Subscriptions{}
		if err := json.Unmarshal([]byte(arg), &subs); err != nil {
			rows.Close()
			return nil, fmt.Errorf("the subscriptions of user %d: %w", id, err)
		}
		u.subs.Store(&subs)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	rows, err = app.db.Query("SELECT token, user_id FROM sessions")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var token string
		var id int64
		if err := rows.Scan(&token, &id); err != nil {
			return nil, err
		}
		if u := st.byID[id]; u != nil {
			st.sessions[token] = u
		}
	}
	return st, rows.Err()
}

// signUp adds a user with no subscriptions; taken reports an email already used.
func (app *App) signUp(email, password, grade string) (taken bool, err error) {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	st := app.st.Load()
	if st.userByEmail(email) != nil {
		return true, nil
	}
	salt := randomHex(8)
	u := &user{email: email, salt: salt, passhash: hashPassword(salt, password), grade: grade}
	empty := Subscriptions{}
	u.subs.Store(&empty)
	err = app.transaction(func(tx *sql.Tx) error {
		res, err := tx.Exec("INSERT INTO users (email, salt, passhash, grade, created_at) VALUES (?, ?, ?, ?, ?)",
			email, salt, u.passhash, grade, now())
		if err != nil {
			return err
		}
		if u.id, err = res.LastInsertId(); err != nil {
			return err
		}
		// Every user has a row of subscriptions, as in the initial data: none yet.
		_, err = tx.Exec("INSERT INTO subscriptions (user_id, arg) VALUES (?, ?)", u.id, "{}")
		return err
	})
	if isDuplicate(err) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	st.mu.Lock()
	st.byID[u.id] = u
	st.byEmail[u.email] = u
	st.mu.Unlock()
	return false, nil
}

// authenticate returns the user with this email and password, or nil.
func (app *App) authenticate(email, password string) *user {
	u := app.st.Load().userByEmail(email)
	if u == nil || subtle.ConstantTimeCompare([]byte(hashPassword(u.salt, password)), []byte(u.passhash)) != 1 {
		return nil
	}
	return u
}

// signIn starts a session for u, ending the browser's old one (oldToken, "" if none), and returns its token. It
// returns "" when u is gone (POST /initialize came in between).
func (app *App) signIn(u *user, oldToken string) (string, error) {
	token := randomHex(32)
	app.wmu.Lock()
	defer app.wmu.Unlock()
	st := app.st.Load()
	st.mu.RLock()
	current := st.byID[u.id] == u
	_, hadOld := st.sessions[oldToken]
	st.mu.RUnlock()
	if !current {
		return "", nil
	}
	if oldToken != "" && hadOld {
		if _, err := app.db.Exec("DELETE FROM sessions WHERE token = ?", oldToken); err != nil {
			return "", err
		}
	}
	if _, err := app.db.Exec("INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)", token, u.id, now()); err != nil {
		return "", err
	}
	st.mu.Lock()
	if hadOld {
		delete(st.sessions, oldToken)
	}
	st.sessions[token] = u
	st.mu.Unlock()
	return token, nil
}

// signOut ends the session token, if it is one.
func (app *App) signOut(token string) error {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	st := app.st.Load()
	if st.session(token) == nil {
		return nil
	}
	if _, err := app.db.Exec("DELETE FROM sessions WHERE token = ?", token); err != nil {
		return err
	}
	st.mu.Lock()
	delete(st.sessions, token)
	st.mu.Unlock()
	return nil
}

// subscribe sets (values nil: removes) u's subscription to service, as long as the session token still names
// u; ok is false when it does not any more.
func (app *App) subscribe(token string, u *user, service string, values map[string]string) (ok bool, err error) {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	if app.st.Load().session(token) != u {
		return false, nil
	}
	old := u.subscriptions()
	if _, subscribed := old[service]; values == nil && !subscribed {
		return true, nil // removing a service not subscribed to changes nothing
	}
	subs := make(Subscriptions, len(old)+1)
	for k, v := range old {
		subs[k] = v
	}
	if values == nil {
		delete(subs, service)
	} else {
		subs[service] = values
	}
	arg, err := json.Marshal(subs) // keys sorted, no spaces: as the dump writes it
	if err != nil {
		return false, err
	}
	if _, err := app.db.Exec("REPLACE INTO subscriptions (user_id, arg) VALUES (?, ?)", u.id, string(arg)); err != nil {
		return false, err
	}
	u.subs.Store(&subs)
	return true, nil
}

// initialize restores the initial data in the database (the initial users' subscriptions from the dump, no later
// users, no sessions) and stores the services' URLs, then reads it all into a new memory.
func (app *App) initialize(httpURL, httpsURL string) error {
	dump, err := os.Open(app.initialSQL)
	if err != nil {
		return err
	}
	defer dump.Close()
	app.wmu.Lock()
	defer app.wmu.Unlock()
	err = app.transaction(func(tx *sql.Tx) error {
		statements := []string{
			"DELETE FROM sessions",
			"DELETE FROM subscriptions",
			fmt.Sprintf("DELETE FROM users WHERE id > %d", initialUsers),
		}
		if !app.isMySQL {
			// New users get ids from initialUsers + 1 on again, as after the first load.
			statements = append(statements,
				fmt.Sprintf("UPDATE sqlite_sequence SET seq = %d WHERE name = 'users'", initialUsers))
		}
		for _, s := range statements {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		err := execStatements(tx, dump, func(s string) bool { return strings.HasPrefix(s, "INSERT INTO subscriptions") })
		if err != nil {
			return err
		}
		return storeEndpoints(tx, httpURL, httpsURL)
	})
	if err != nil {
		return err
	}
	if app.isMySQL {
		// ALTER TABLE commits on MariaDB: it runs after the transaction.
		if _, err := app.db.Exec(fmt.Sprintf("ALTER TABLE users AUTO_INCREMENT = %d", initialUsers+1)); err != nil {
			return err
		}
	}
	st, err := app.load()
	if err != nil {
		return err
	}
	app.st.Store(st)
	return nil
}

// transaction runs fn in a transaction, committed if fn succeeds and rolled back otherwise.
func (app *App) transaction(fn func(tx *sql.Tx) error) error {
	tx, err := app.db.Begin()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// hashPassword is what the users table stores: the SHA-512 of salt + password, in lowercase hex.
func hashPassword(salt, password string) string {
	sum := sha512.Sum512([]byte(salt + password))
	return hex.EncodeToString(sum[:])
}

// isDuplicate reports whether err is an insert refused by a unique key.
func isDuplicate(err error) bool {
	var sqliteErr sqlite3.Error
	var mysqlErr *mysql.MySQLError
	return errors.As(err, &sqliteErr) && sqliteErr.ExtendedCode == sqlite3.ErrConstraintUnique ||
		errors.As(err, &mysqlErr) && mysqlErr.Number == 1062
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// now is the current UTC time, in whole seconds.
func now() string { return time.Now().UTC().Format(timeFormat) }
