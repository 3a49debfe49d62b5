// Package datagen is what the problems' data generators share: random
// streams that depend only on a seed, a kind and an item's id (so that the
// benchmarker can compute any item on its own, without reading the app's
// database), a writer of multi-row SQL dumps, and writing a dump (or a
// directory of data files) to disk only when it is not current.
package datagen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Gen draws from one item's stream.
type Gen struct {
	src *rand.PCG
}

// Stream returns the stream of item id of the given kind, under seed. The
// same three numbers give the same draws on every machine and Go release:
// the draws depend only on the PCG algorithm.
func Stream(seed, kind, id uint64) Gen {
	return Gen{rand.NewPCG(Mix(seed^kind), Mix(id+Mix(kind)))}
}

// Mix is the SplitMix64 finalizer: it spreads nearby seeds far apart.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Uint64 returns the stream's next 64 bits.
func (g Gen) Uint64() uint64 { return g.src.Uint64() }

// Intn returns a number in [0, n), for n >= 1. It reduces the stream's output
// itself rather than through rand.Rand, so that generated data does not change
// with how a Go release implements IntN.
func (g Gen) Intn(n int) int { return int(g.Int63n(int64(n))) }

// Int63n returns a number in [0, n), for n >= 1.
func (g Gen) Int63n(n int64) int64 {
	hi, _ := bits.Mul64(g.src.Uint64(), uint64(n))
	return int64(hi)
}

// Pick returns one of words.
func (g Gen) Pick(words []string) string { return words[g.Intn(len(words))] }

// RowsPerInsert is the most rows one INSERT statement of a dump holds.
const RowsPerInsert = 500

// SQLWriter writes a dump: a header comment line, then for each table
// multi-row INSERT statements of at most RowsPerInsert rows. Every statement
// ends with ");\n" at the end of a line; when no value holds ";\n", the dump
// can be split into statements on ";\n". The same SQL is valid for SQLite and
// for MariaDB.
type SQLWriter struct {
	bw     *bufio.Writer
	insert string
	rows   int64 // rows the current table declared
	row    int64 // rows of it written
	buf    []byte
	err    error
}

// NewSQLWriter starts a dump on w with its header line (without "\n").
func NewSQLWriter(w io.Writer, header string) *SQLWriter {
	s := &SQLWriter{bw: bufio.NewWriterSize(w, 1<<16)}
	_, s.err = s.bw.WriteString(header + "\n")
	return s
}

// Table starts the rows of a table: insert is the statement's head, such as
// "INSERT INTO article (id, title) VALUES", and rows how many rows follow.
func (s *SQLWriter) Table(insert string, rows int64) {
	if s.err == nil && s.row != s.rows {
		s.err = fmt.Errorf("datagen: %q got %d of its %d rows", s.insert, s.row, s.rows)
	}
	s.insert, s.rows, s.row = insert, rows, 0
}

// Buf returns an empty scratch buffer to build a row in; it is reused by the
// next call.
func (s *SQLWriter) Buf() []byte { return s.buf[:0] }

// Row writes one row of the current table: its values in parentheses, as
// row holds them, such as "(1,'title')".
func (s *SQLWriter) Row(row []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.row >= s.rows {
		s.err = fmt.Errorf("datagen: %q has more than its %d rows", s.insert, s.rows)
		return s.err
	}
	s.row++
	if (s.row-1)%RowsPerInsert == 0 {
		s.bw.WriteString(s.insert)
		s.bw.WriteByte('\n')
	}
	s.bw.Write(row)
	if s.row%RowsPerInsert == 0 || s.row == s.rows {
		_, s.err = s.bw.WriteString(";\n")
	} else {
		_, s.err = s.bw.WriteString(",\n")
	}
	s.buf = row
	return s.err
}

// Close checks that the last table got all its rows and flushes the dump.
func (s *SQLWriter) Close() error {
	s.Table("", 0)
	if s.err != nil {
		return s.err
	}
	return s.bw.Flush()
}

// AppendQuoted appends s in single quotes. It does not escape: generated text
// must hold no quote or backslash.
func AppendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '\'')
	buf = append(buf, s...)
	return append(buf, '\'')
}

// Ensure writes a dump to path with write unless a file there already starts
// with the line header (the same generator version, seed and sizes). It
// writes a temporary file in the same directory and renames it, so a dump at
// path is always complete. It reports whether it wrote.
func Ensure(path, header string, write func(io.Writer) error) (bool, error) {
	if f, err := os.Open(path); err == nil {
		line, _ := bufio.NewReader(io.LimitReader(f, 1024)).ReadString('\n')
		f.Close()
		if strings.TrimSuffix(line, "\n") == header {
			return false, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	return true, nil
}

// StampFile is the file EnsureDir keeps in a data directory: its first line
// is the header of the data the directory holds.
const StampFile = "VERSION"

// EnsureDir writes a directory of data files (a problem whose initial data
// is several files, such as one SQLite database per tenant) unless dir
// already holds a StampFile whose first line is header. write fills a fresh
// temporary directory beside dir; EnsureDir then adds the stamp and puts the
// new directory in the old one's place, so a directory with a current stamp
// is always complete. It reports whether it wrote.
func EnsureDir(dir, header string, write func(tmp string) error) (bool, error) {
	if f, err := os.Open(filepath.Join(dir, StampFile)); err == nil {
		line, _ := bufio.NewReader(io.LimitReader(f, 1024)).ReadString('\n')
		f.Close()
		if strings.TrimSuffix(line, "\n") == header {
			return false, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".*.tmp")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp) // fails harmlessly once renamed
	if err := write(tmp); err != nil {
		return false, err
	}
	if err := os.WriteFile(filepath.Join(tmp, StampFile), []byte(header+"\n"), 0o644); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return false, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return false, err
	}
	return true, nil
}
