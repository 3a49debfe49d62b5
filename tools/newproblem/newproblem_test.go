package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tunecon/tunecon/engine"
)

// repoRoot is the source tree these tests run in.
const repoRoot = "../.."

func TestCheckName(t *testing.T) {
	good := []string{"shop", "a", "x1", "isucon9q", strings.Repeat("a", MaxNameLen)}
	for _, name := range good {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", name, err)
		}
	}
	bad := map[string]string{
		"":                                "empty",
		strings.Repeat("a", MaxNameLen+1): "longer than 20",
		"Shop":                            "start with a lowercase letter",
		"1shop":                           "start with a lowercase letter",
		"sh-op":                           "only lowercase letters and digits",
		"shop_2":                          "only lowercase letters and digits",
		"shoP":                            "only lowercase letters and digits",
		"café":                            "only lowercase letters and digits",
		"func":                            "keyword",
		"select":                          "keyword",
		"string":                          "predeclared",
		"len":                             "predeclared",
		"nil":                             "predeclared",
		"any":                             "predeclared",
		"max":                             "predeclared",
		"kit":                             "reserved",
		"engine":                          "reserved",
		"problems":                        "reserved",
		"data":                            "reserved",
		"example":                         "reserved",
		"skeleton":                        "reserved",
		"testdata":                        "reserved",
		"main":                            "reserved",
	}
	for name, want := range bad {
		err := CheckName(name)
		if !isUsage(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckName(%q) = %v, want a one-line usage error saying %q", name, err, want)
		}
	}
}

func isUsage(err error) bool { return errors.As(err, new(*UsageError)) }

// tinyTree makes a tree with the repository's go.mod and registry and the
// directory of each of dirs under problems/.
func tinyTree(t *testing.T, dirs ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range []string{"go.mod", Registry} {
		b, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, p), b)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, "problems", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	root := tinyTree(t, "blog", "bank", "stray")
	if err := Validate(root, "shop"); err != nil {
		t.Errorf("Validate(shop) = %v", err)
	}
	for name, want := range map[string]string{
		"blog":   "already exists",
		"stray":  "already exists", // a directory not registered is still taken
		"slices": "already used in problems/problems.go",
		"lookup": "", // Lookup is not lookup: fine
		"Shop":   "lowercase",
	} {
		err := Validate(root, name)
		if want == "" {
			if err != nil {
				t.Errorf("Validate(%q) = %v, want nil", name, err)
			}
			continue
		}
		if !isUsage(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v, want a usage error saying %q", name, err, want)
		}
	}
}

func fields(name string) Fields {
	return Fields{Name: name, Prefix: strings.ToUpper(name), Title: strings.ToUpper(name[:1]) + name[1:], Module: "github.com/tunecon/tunecon"}
}

func TestRegister(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, Registry))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Register(src, fields("shop"))
	if err != nil {
		t.Fatal(err)
	}
	if gofmted, _ := format.Source(out); !bytes.Equal(gofmted, out) {
		t.Error("the registry is not gofmt-ed after Register")
	}
	// Exactly two lines added, each above its marker in its block; deleting
	// them by hand gives back the original.
	imp, entry := "\t\"github.com/tunecon/tunecon/problems/shop\"\n", "\t\tshop.Problem,\n"
	s := string(out)
	if strings.Count(s, imp) != 1 || strings.Count(s, entry) != 1 {
		t.Fatalf("registry after Register lacks %q or %q:\n%s", imp, entry, s)
	}
	if i, m := strings.Index(s, imp), strings.Index(s, ImportsMarker); i > m {
		t.Error("the import is below its marker")
	}
	if i, m := strings.Index(s, entry), strings.Index(s, ListMarker); i > m || strings.Contains(s[i:m], "}") {
		t.Error("the descriptor is not in the list above its marker")
	}
	if back := strings.Replace(strings.Replace(s, imp, "", 1), entry, "", 1); back != string(src) {
		t.Errorf("removing the two lines does not give back the registry:\n%s", back)
	}

	if _, err := Register(out, fields("shop")); !isUsage(err) {
		t.Errorf("registering shop twice: %v, want a usage error", err)
	}
	twice, err := Register(out, fields("zoo"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(twice), "shop.Problem,\n\t\tzoo.Problem,\n\t\t"+ListMarker) {
		t.Errorf("a second problem does not go after the first:\n%s", twice)
	}
	for name, broken := range map[string]string{
		"no imports marker": strings.Replace(string(src), ImportsMarker, "", 1),
		"no list marker":    strings.Replace(string(src), ListMarker, "", 1),
		"two list markers":  strings.Replace(string(src), ListMarker, ListMarker+"\n\t\t"+ListMarker, 1),
	} {
		if _, err := Register([]byte(broken), fields("shop")); err == nil || !strings.Contains(err.Error(), "marker") {
			t.Errorf("%s: Register = %v, want an error about the marker", name, err)
		}
	}
}

func TestRender(t *testing.T) {
	files, err := Render(skeleton, skeletonDir, fields("shop"))
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string][]byte{}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, "problems/shop/") || strings.Contains(f.Path, "NAME") || strings.HasSuffix(f.Path, ".tmpl") {
			t.Errorf("rendered path %s", f.Path)
		}
		byPath[strings.TrimPrefix(f.Path, "problems/shop/")] = f.Data
	}
	for _, p := range []string{"shop.go", "shop_test.go", "scenario.go", "users.go", "pages.go", "model.go", "checks.go",
		"MANUAL.md", "assets.sha256", "data/data.go", "data/data_test.go", "webapp/sql/schema.sqlite.sql",
		"webapp/public/css/shop.css", "webapp/go/go.mod", "webapp/go/go.sum", "webapp/go/main.go",
		"webapp/python/app.py", "webapp/python/gunicorn.conf.py", "webapp/python/requirements.txt"} {
		if byPath[p] == nil {
			t.Errorf("the skeleton lacks %s", p)
		}
	}
	css := byPath["webapp/public/css/shop.css"]
	sum := sha256.Sum256(css)
	if want := hex.EncodeToString(sum[:]) + "  css/shop.css\n"; string(byPath["assets.sha256"]) != want {
		t.Errorf("assets.sha256 = %q, want %q", byPath["assets.sha256"], want)
	}
	if m, err := engine.ManifestFromSums(string(byPath["assets.sha256"]), "/static"); err != nil || len(m) != 1 {
		t.Errorf("the manifest does not read back: %v %v", m, err)
	}
	for p, want := range map[string]string{
		"shop.go":                        `const Name = "shop"`,
		"webapp/go/go.mod":               "module tunecon-shop\n",
		"webapp/go/main.go":              `os.Getenv("SHOP_DB")`,
		"webapp/python/app.py":           `os.environ.get("SHOP_INITIAL_SQL")`,
		"webapp/python/gunicorn.conf.py": `os.environ.get("SHOP_ADDR")`,
		"MANUAL.md":                      "`SHOP_ROOT`",
		"shop_test.go":                   "apptest.New(shop.Problem)",
	} {
		if !strings.Contains(string(byPath[p]), want) {
			t.Errorf("%s lacks %q", p, want)
		}
	}
	// The apps' own templates keep their actions, the same in both apps.
	for p, want := range map[string]string{
		"webapp/go/main.go":    `<span class="item-title">{{.Title}}</span>`,
		"webapp/python/app.py": `<span class="item-title">{{ item.title }}</span>`,
	} {
		if !strings.Contains(string(byPath[p]), want) {
			t.Errorf("%s lacks %q", p, want)
		}
	}
	if goSum, blogSum := string(byPath["webapp/go/go.sum"]), readFile(t, "problems/blog/webapp/go/go.sum"); !containsLines(blogSum, goSum) {
		t.Errorf("the skeleton's go.sum is not a part of the blog app's:\n%s", goSum)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func containsLines(whole, part string) bool {
	for _, l := range strings.Split(strings.TrimSpace(part), "\n") {
		if !strings.Contains(whole, l+"\n") {
			return false
		}
	}
	return true
}

func TestRenderRejectsNonTemplates(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{"sk/a.go.tmpl": file("package {{.Name}}\n"), "sk/b.go": file("package b\n")}
	if _, err := Render(fsys, "sk", fields("shop")); err == nil || !strings.Contains(err.Error(), ".tmpl") {
		t.Errorf("Render of a file without .tmpl: %v", err)
	}
	for name, src := range map[string]string{
		"an unknown field": "package {{.Nmae}}\n",
		"invalid Go":       "package {{.Name}}\nfunc {\n",
	} {
		if _, err := Render(fstest.MapFS{"sk/a.go.tmpl": file(src)}, "sk", fields("shop")); err == nil {
			t.Errorf("Render with %s: no error", name)
		}
	}
}

func TestCheckClashes(t *testing.T) {
	for name, clash := range map[string]bool{
		"shop":    false,
		"time":    true, // the external test imports time
		"bytes":   true,
		"apptest": true,
		"apps":    true, // the external test's var apps
		"goquery": true, // pages.go imports it
	} {
		files, err := Render(skeleton, skeletonDir, fields(name))
		if err != nil {
			t.Fatal(err)
		}
		err = CheckClashes(files, fields(name))
		if clash != (err != nil) || (err != nil && !isUsage(err)) {
			t.Errorf("CheckClashes(%q) = %v, want a clash: %v", name, err, clash)
		}
	}
}

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestCreate(t *testing.T) {
	root := tinyTree(t, "blog")
	written, err := Create(root, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if written[len(written)-1] != Registry || len(written) < 15 {
		t.Errorf("written = %v", written)
	}
	for _, p := range written {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(readTree(t, root, Registry), "shop.Problem,") {
		t.Error("shop is not registered")
	}
	before := snapshot(t, root)
	if _, err := Create(root, "shop"); !isUsage(err) {
		t.Errorf("a second Create: %v, want a usage error", err)
	}
	if !sameSnapshot(before, snapshot(t, root)) {
		t.Error("a refused Create changed the tree")
	}
}

func readTree(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCreateWritesNothingOnFailure(t *testing.T) {
	root := tinyTree(t)
	reg := filepath.Join(root, Registry)
	writeFile(t, reg, []byte(strings.Replace(readTree(t, root, Registry), ListMarker, "", 1)))
	before := snapshot(t, root)
	if _, err := Create(root, "shop"); err == nil || isUsage(err) {
		t.Errorf("Create with a broken registry: %v, want a failure", err)
	}
	if !sameSnapshot(before, snapshot(t, root)) {
		t.Error("a failed Create changed the tree")
	}
}

func TestRun(t *testing.T) {
	root := tinyTree(t, "blog")
	env := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		code int
		out  string // on stdout, or stderr when code != 0
	}{
		{[]string{"-root", root}, 2, "usage: newproblem -name NAME"},
		{[]string{"-root", root, "-name", "Bad"}, 2, `name "Bad" must start with a lowercase letter`},
		{[]string{"-root", root, "-name", "blog"}, 2, "problems/blog already exists"},
		{[]string{"-root", root, "-name", "shop", "extra"}, 2, "usage:"},
		{[]string{"-root", root, "-name", "shop"}, 0, "bin/tunecon try shop"},
		{[]string{"-root", root, "-name", "shop"}, 2, "problems/shop already exists"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, env, &stdout, &stderr)
		got := stdout.String()
		if c.code != 0 {
			got = stderr.String()
			if strings.Count(got, "\n") != 1 {
				t.Errorf("run(%q): stderr is not one line: %q", c.args, got)
			}
		}
		if code != c.code || !strings.Contains(got, c.out) {
			t.Errorf("run(%q) = %d, %q; want %d and %q", c.args, code, got, c.code, c.out)
		}
	}
	// TUNECON_ROOT names the tree when -root does not.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-name", "zoo"}, func(k string) string {
		if k == "TUNECON_ROOT" {
			return root
		}
		return ""
	}, &stdout, &stderr); code != 0 {
		t.Errorf("run with TUNECON_ROOT = %d: %s", code, stderr.String())
	}
}
