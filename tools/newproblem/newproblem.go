package main

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
)

// skeleton is the template tree of a problem: every file ends in .tmpl (so that
// the Go toolchain never compiles a template, and a go.mod among them does not
// start a module) and is a text/template over Fields. "NAME" in a file's path
// becomes the problem's name. A template line that must keep "{{" (an app's own
// HTML template) is written as a raw-string action: {{`{{range .}}...`}}.
//
//go:embed skeleton
var skeleton embed.FS

// skeletonDir is the template tree's root inside the embedded FS.
const skeletonDir = "skeleton"

// Registry is the file that lists the problems, relative to the root.
const Registry = "problems/problems.go"

// The registry's marker comments: the new import goes on the line before
// ImportsMarker, the new descriptor on the line before ListMarker.
const (
	ImportsMarker = "// new-problem: imports"
	ListMarker    = "// new-problem: list"
)

// MaxNameLen is the longest name a problem may have.
const MaxNameLen = 20

// The problem's asset manifest, and the directory of the public files it is
// computed from after rendering (paths relative to problems/NAME).
const (
	manifestFile = "assets.sha256"
	publicDir    = "webapp/public/"
)

// reserved are names taken by the tree itself or by the go command's
// conventions (a directory named testdata or vendor, a main package).
var reserved = []string{"kit", "engine", "problems", "data", "example", "skeleton",
	"main", "internal", "testdata", "vendor"}

// UsageError is a bad name or bad usage: the command exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// Fields are what the skeleton's templates can use.
type Fields struct {
	Name   string // "shop": the package, the directory, the command-line name
	Prefix string // "SHOP": the apps' environment variables are PREFIX_ADDR and so on
	Title  string // "Shop": the descriptor's and the pages' title until the author picks one
	Module string // "github.com/tunecon/tunecon": the source tree's Go module
}

// NewFields returns the fields of the problem name in the tree at root.
func NewFields(root, name string) (Fields, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return Fields{}, err
	}
	return Fields{Name: name, Prefix: strings.ToUpper(name), Title: strings.ToUpper(name[:1]) + name[1:], Module: mod}, nil
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			if p, err := strconv.Unquote(strings.TrimSpace(rest)); err == nil {
				return p, nil
			}
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

// CheckName checks a name's form alone: lowercase ASCII letters and digits,
// starting with a letter, at most MaxNameLen long, neither a Go keyword nor
// a predeclared identifier, and not reserved.
func CheckName(name string) error {
	switch {
	case name == "":
		return usagef("the name is empty")
	case len(name) > MaxNameLen:
		return usagef("name %q is longer than %d characters", name, MaxNameLen)
	case name[0] < 'a' || name[0] > 'z':
		return usagef("name %q must start with a lowercase letter (a-z)", name)
	case strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789") != "":
		return usagef("name %q may hold only lowercase letters and digits (a-z, 0-9)", name)
	case token.IsKeyword(name):
		return usagef("name %q is a Go keyword: it cannot name a package", name)
	case types.Universe.Lookup(name) != nil:
		return usagef("name %q is a predeclared Go identifier: pick another", name)
	case slices.Contains(reserved, name):
		return usagef("name %q is reserved (%s)", name, strings.Join(reserved, ", "))
	}
	return nil
}

// Validate checks name against the tree at root too: no directory
// problems/NAME may exist, and the registry must not already import it or
// use it as a name.
func Validate(root, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(root, "problems", name)); err == nil {
		return usagef("problems/%s already exists: pick another name (nothing was written)", name)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	src, err := os.ReadFile(filepath.Join(root, Registry))
	if err != nil {
		return err
	}
	taken, err := fileScopeNames(src)
	if err != nil {
		return fmt.Errorf("%s: %w", Registry, err)
	}
	if taken[name] {
		return usagef("name %q is already used in %s: pick another", name, Registry)
	}
	return nil
}

// fileScopeNames lists the names a Go file's imports and top-level
// declarations take: a package imported under one of them would clash.
func fileScopeNames(src []byte) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := topLevelNames(f)
	for _, imp := range f.Imports {
		names[importName(imp)] = true
	}
	return names, nil
}

// topLevelNames lists the names a file declares at package level.
func topLevelNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				}
			}
		}
	}
	return names
}

// importName is the name an import takes in its file: its explicit name, or
// the package's, taken as the last element of its path that is not a major
// version ("math/rand/v2" is rand).
func importName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	p, _ := strconv.Unquote(imp.Path.Value)
	elems := strings.Split(p, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = elems[len(elems)-2]
	}
	return last
}

// File is one file to write, its path relative to the root.
type File struct {
	Path string // slash-separated
	Data []byte
	Mode fs.FileMode
}

// Render renders the template tree under dir of fsys for f into the files
// of problems/NAME, in path order, with the asset manifest of the rendered
// public files added and every Go file gofmt-ed.
func Render(fsys fs.FS, dir string, f Fields) ([]File, error) {
	base := "problems/" + f.Name + "/"
	var out []File
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, ok := strings.CutSuffix(strings.TrimPrefix(p, dir+"/"), ".tmpl")
		if !ok {
			return fmt.Errorf("skeleton file %s does not end in .tmpl", p)
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, f); err != nil {
			return err
		}
		data := buf.Bytes()
		if strings.HasSuffix(rel, ".go") {
			if data, err = format.Source(data); err != nil {
				return fmt.Errorf("rendered %s is not valid Go: %w", p, err)
			}
		}
		out = append(out, File{Path: base + strings.ReplaceAll(rel, "NAME", f.Name), Data: data, Mode: 0o644})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: base + manifestFile, Data: manifest(out, base+publicDir), Mode: 0o644})
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(out); i++ {
		if out[i].Path == out[i-1].Path {
			return nil, fmt.Errorf("the skeleton renders %s twice", out[i].Path)
		}
	}
	return out, nil
}

// manifest is `sha256sum` of the files under dir, by path relative to dir in
// byte order: what `cd webapp/public && sha256sum $(find . -type f | sed
// 's|^./||' | sort)` prints in the C locale.
func manifest(files []File, dir string) []byte {
	var lines []string
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f.Path, dir); ok {
			sum := sha256.Sum256(f.Data)
			lines = append(lines, hex.EncodeToString(sum[:])+"  "+rel+"\n")
		}
	}
	// By path: after the 64 hex digits and the two spaces.
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return []byte(strings.Join(lines, ""))
}

// CheckClashes checks that the rendered Go files of the tree's module
// (webapp/ holds modules of their own) can use the name: none of them may
// import another package under it, and a file that imports the problem
// (its external test) may not declare it either.
func CheckClashes(files []File, f Fields) error {
	own := f.Module + "/problems/" + f.Name
	for _, file := range files {
		if !strings.HasSuffix(file.Path, ".go") || strings.Contains(file.Path, "/webapp/") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), file.Path, file.Data, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		taken := map[string]bool{}
		importsOwn := false
		for _, imp := range parsed.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == own {
				importsOwn = true
				continue
			}
			taken[importName(imp)] = true
		}
		if importsOwn {
			maps.Copy(taken, topLevelNames(parsed))
		}
		if taken[f.Name] {
			return usagef("name %q clashes with a package or a name that the skeleton's %s uses: pick another", f.Name, path.Base(file.Path))
		}
	}
	return nil
}

// Register adds the problem to the registry's source: its import on the line
// before ImportsMarker and NAME.Problem on the line before ListMarker, each
// indented as its marker, then gofmt-ed.
func Register(src []byte, f Fields) ([]byte, error) {
	importLine := strconv.Quote(f.Module + "/problems/" + f.Name)
	if bytes.Contains(src, []byte(importLine)) {
		return nil, usagef("%s already imports %s", Registry, importLine)
	}
	out, err := insertBefore(src, ImportsMarker, importLine)
	if err != nil {
		return nil, err
	}
	if out, err = insertBefore(out, ListMarker, f.Name+".Problem,"); err != nil {
		return nil, err
	}
	formatted, err := format.Source(out)
	if err != nil {
		return nil, fmt.Errorf("%s does not parse after adding %s: %w", Registry, f.Name, err)
	}
	return formatted, nil
}

// insertBefore inserts line before the one line of src that holds marker,
// with the marker line's indentation.
func insertBefore(src []byte, marker, line string) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == marker {
			if at >= 0 {
				return nil, fmt.Errorf("%s holds the marker line %q more than once", Registry, marker)
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("%s lacks the marker line %q", Registry, marker)
	}
	indent := lines[at][:len(lines[at])-len(strings.TrimLeft(lines[at], " \t"))]
	lines = slices.Insert(lines, at, indent+line+"\n")
	return []byte(strings.Join(lines, "")), nil
}

// Create makes problems/NAME in the tree at root and registers it. It
// checks everything first (the name, the rendering, the registry's markers)
// and then writes; it never overwrites a file, and if writing fails midway
// it removes what it wrote. It returns the paths written, registry last.
func Create(root, name string) ([]string, error) {
	if err := Validate(root, name); err != nil {
		return nil, err
	}
	f, err := NewFields(root, name)
	if err != nil {
		return nil, err
	}
	files, err := Render(skeleton, skeletonDir, f)
	if err != nil {
		return nil, err
	}
	if err := CheckClashes(files, f); err != nil {
		return nil, err
	}
	registryPath := filepath.Join(root, Registry)
	src, err := os.ReadFile(registryPath)
	if err != nil {
		return nil, err
	}
	registered, err := Register(src, f)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "problems", name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err // it exists: Validate raced with someone
	}
	written, err := writeFiles(root, files)
	if err == nil {
		err = replaceFile(registryPath, src, registered)
	}
	if err != nil {
		os.RemoveAll(dir) // made by this call, so nothing of anyone else's
		return nil, err
	}
	return append(written, Registry), nil
}

// writeFiles writes files under root, each only if it does not exist.
func writeFiles(root string, files []File) ([]string, error) {
	var written []string
	for _, file := range files {
		p := filepath.Join(root, filepath.FromSlash(file.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, err
		}
		w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, file.Mode)
		if err != nil {
			return written, err
		}
		_, err = w.Write(file.Data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return written, err
		}
		written = append(written, file.Path)
	}
	return written, nil
}

// replaceFile replaces path's content, which must still be old, with data,
// keeping its mode: written to a temporary file beside it and renamed.
func replaceFile(path string, old, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if cur, err := os.ReadFile(path); err != nil {
		return err
	} else if !bytes.Equal(cur, old) {
		return fmt.Errorf("%s changed while the skeleton was written: nothing registered", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), st.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
