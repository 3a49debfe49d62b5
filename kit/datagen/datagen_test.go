package datagen_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/kit/datagen"
)

func TestStreamsAreFixedAndIndependent(t *testing.T) {
	// These numbers pin the streams: a change would change every problem's
	// data (and must come with a bump of its data version).
	g := datagen.Stream(1, 2, 3)
	if got := g.Uint64(); got != datagen.Stream(1, 2, 3).Uint64() {
		t.Fatalf("the same stream drew %d and then something else", got)
	}
	if datagen.Stream(1, 2, 3).Uint64() == datagen.Stream(1, 2, 4).Uint64() ||
		datagen.Stream(1, 2, 3).Uint64() == datagen.Stream(1, 5, 3).Uint64() {
		t.Error("neighbouring streams drew the same number")
	}
	for n := 1; n < 50; n++ {
		if v := g.Intn(n); v < 0 || v >= n {
			t.Fatalf("Intn(%d) = %d", n, v)
		}
	}
}

func TestSQLWriterSplitsStatements(t *testing.T) {
	var out bytes.Buffer
	w := datagen.NewSQLWriter(&out, "-- header")
	w.Table("INSERT INTO a (id) VALUES", datagen.RowsPerInsert+1)
	for i := range datagen.RowsPerInsert + 1 {
		row := append(w.Buf(), '(')
		row = strconv.AppendInt(row, int64(i+1), 10)
		if err := w.Row(append(row, ')')); err != nil {
			t.Fatal(err)
		}
	}
	w.Table("INSERT INTO b (s) VALUES", 1)
	if err := w.Row(append(datagen.AppendQuoted([]byte("("), "x"), ')')); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.HasPrefix(s, "-- header\nINSERT INTO a (id) VALUES\n(1),\n(2),\n") {
		t.Errorf("dump starts %q", s[:60])
	}
	stmts := strings.Split(strings.TrimPrefix(s, "-- header\n"), ";\n")
	if len(stmts) != 4 || stmts[3] != "" {
		t.Fatalf("%d statements: %q", len(stmts), stmts)
	}
	if !strings.HasSuffix(stmts[0], "(500)") || stmts[1] != "INSERT INTO a (id) VALUES\n(501)" || stmts[2] != "INSERT INTO b (s) VALUES\n('x')" {
		t.Errorf("statements %q ... %q, %q", stmts[0][len(stmts[0])-20:], stmts[1], stmts[2])
	}
}

func TestSQLWriterCountsRows(t *testing.T) {
	w := datagen.NewSQLWriter(io.Discard, "-- h")
	w.Table("INSERT INTO a (id) VALUES", 2)
	if err := w.Row([]byte("(1)")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("a table short of a row was accepted")
	}
	w = datagen.NewSQLWriter(io.Discard, "-- h")
	w.Table("INSERT INTO a (id) VALUES", 1)
	_ = w.Row([]byte("(1)"))
	if err := w.Row([]byte("(2)")); err == nil {
		t.Error("a row past the table's count was accepted")
	}
}

func TestEnsureWritesOnlyWhenStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "initial.sql")
	writes := 0
	write := func(body string) func(io.Writer) error {
		return func(w io.Writer) error { writes++; _, err := io.WriteString(w, body); return err }
	}
	for i, want := range []bool{true, false} {
		wrote, err := datagen.Ensure(path, "-- v1", write("-- v1\nrows\n"))
		if err != nil || wrote != want {
			t.Fatalf("call %d: wrote=%v err=%v, want %v", i+1, wrote, err, want)
		}
	}
	if wrote, err := datagen.Ensure(path, "-- v2", write("-- v2\nrows\n")); err != nil || !wrote {
		t.Fatalf("a new header did not rewrite: %v %v", wrote, err)
	}
	got, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(filepath.Dir(path))
	if string(got) != "-- v2\nrows\n" || len(entries) != 1 || writes != 2 {
		t.Errorf("file %q, %d files in its directory, %d writes", got, len(entries), writes)
	}
}

func TestEnsureDirWritesOnlyWhenStale(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub", "initial")
	writes := 0
	write := func(name string) func(string) error {
		return func(tmp string) error {
			writes++
			return os.WriteFile(filepath.Join(tmp, name), []byte(name), 0o644)
		}
	}
	for i, want := range []bool{true, false} {
		wrote, err := datagen.EnsureDir(dir, "leagues v1", write("a.db"))
		if err != nil || wrote != want {
			t.Fatalf("call %d: wrote=%v err=%v, want %v", i+1, wrote, err, want)
		}
	}
	if wrote, err := datagen.EnsureDir(dir, "leagues v2", write("b.db")); err != nil || !wrote {
		t.Fatalf("a new header did not rewrite: %v %v", wrote, err)
	}
	stamp, _ := os.ReadFile(filepath.Join(dir, datagen.StampFile))
	entries, _ := os.ReadDir(dir)
	siblings, _ := os.ReadDir(filepath.Dir(dir))
	if string(stamp) != "leagues v2\n" || len(entries) != 2 || entries[0].Name() != datagen.StampFile ||
		entries[1].Name() != "b.db" || len(siblings) != 1 || writes != 2 {
		t.Errorf("stamp %q, files %v, beside it %v, %d writes", stamp, entries, siblings, writes)
	}
	failed := errors.New("disk full")
	if _, err := datagen.EnsureDir(dir, "leagues v3", func(string) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("a failed write returned %v", err)
	}
	if stamp, _ := os.ReadFile(filepath.Join(dir, datagen.StampFile)); string(stamp) != "leagues v2\n" {
		t.Errorf("a failed write replaced the data: stamp %q", stamp)
	}
	if siblings, _ := os.ReadDir(filepath.Dir(dir)); len(siblings) != 1 {
		t.Errorf("a failed write left %v", siblings)
	}
}
