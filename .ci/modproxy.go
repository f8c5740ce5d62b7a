// Command modproxy writes a file-based Go module proxy that serves every
// module of this repository at one version, built from the working tree the
// way a release tag would be: the files git tracks or would track (tracked,
// plus untracked files that .gitignore does not exclude), each module holding
// the files below its go.mod but not those of a module nested inside it.
//
//	go run .ci/modproxy.go -version v0.1.0 -o /tmp/proxy
//	GOPROXY=file:///tmp/proxy,$(go env GOPROXY) GONOSUMDB=github.com/shardedsink/shardedsink go get ...
//
// The layout is the GOPROXY protocol's: for each module path (case-encoded),
// @v/list, @v/VERSION.info, @v/VERSION.mod and @v/VERSION.zip, the zip's
// entries named module@version/path as the module zip format requires.
// Modules under a testdata folder are fixtures, not releases: like any
// nested module they are left out of the module around them (the go command
// leaves out every folder holding a go.mod when it zips a module), and they
// get no entry of their own. Each module must carry a LICENSE file (pkg.go.dev shows no
// documentation for a module without one), and a file name that a module zip
// may not hold is an error.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
)

func main() {
	version := flag.String("version", "", "version to serve every module at, e.g. v0.1.0")
	out := flag.String("o", "", "folder to write the proxy into (created if missing)")
	flag.Parse()
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func run(version, out string) error {
	if !semver.MatchString(version) {
		return fmt.Errorf("-version %q: want a release version such as v0.1.0", version)
	}
	if out == "" {
		return errors.New("-o: the proxy folder is required")
	}
	files, err := repoFiles()
	if err != nil {
		return err
	}
	// Module roots: the folders holding a go.mod.
	var roots []string
	for _, f := range files {
		if path.Base(f) == "go.mod" {
			roots = append(roots, path.Dir(f))
		}
	}
	// Longest root first, so that a file belongs to the innermost module.
	sort.Slice(roots, func(i, j int) bool { return len(roots[i]) > len(roots[j]) })
	owned := make(map[string][]string)
	for _, f := range files {
		for _, r := range roots {
			if r == "." || f == r || strings.HasPrefix(f, r+"/") {
				owned[r] = append(owned[r], f)
				break
			}
		}
	}
	for _, r := range roots {
		if slices.Contains(strings.Split(r, "/"), "testdata") {
			continue
		}
		modPath, err := writeModule(out, r, version, owned[r])
		if err != nil {
			return fmt.Errorf("module in %s: %w", r, err)
		}
		fmt.Printf("%s@%s (%d files)\n", modPath, version, len(owned[r]))
	}
	return nil
}

// repoFiles lists the files of the working tree that a commit would hold:
// tracked and not deleted, or untracked and not ignored.
func repoFiles() ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v: %s", err, stderr.String())
	}
	var files []string
	seen := make(map[string]bool)
	for _, f := range strings.Split(string(b), "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		fi, err := os.Lstat(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%v); a module zip holds regular files only", f, fi.Mode().Type())
		}
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+(\S+)\s*$`)

func writeModule(out, root, version string, files []string) (string, error) {
	gomod, err := os.ReadFile(path.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	m := moduleLine.FindSubmatch(gomod)
	if m == nil {
		return "", errors.New("go.mod has no module line")
	}
	modPath := strings.Trim(string(m[1]), `"`)
	if !slices.Contains(files, path.Join(root, "LICENSE")) {
		return "", fmt.Errorf("%s has no LICENSE file", modPath)
	}
	enc, err := escapePath(modPath)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(out, filepath.FromSlash(enc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	folded := make(map[string]string)
	for _, f := range files {
		rel := f
		if root != "." {
			rel = strings.TrimPrefix(f, root+"/")
		}
		if err := checkFilePath(rel); err != nil {
			return "", err
		}
		low := strings.ToLower(rel)
		if other, ok := folded[low]; ok {
			return "", fmt.Errorf("%q and %q differ only in case; a module zip may not hold both", other, rel)
		}
		folded[low] = rel
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		w, err := zw.Create(modPath + "@" + version + "/" + rel)
		if err != nil {
			return "", err
		}
		if _, err := w.Write(data); err != nil {
			return "", err
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}

	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  buf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	return modPath, nil
}

// escapePath is the module proxy's case encoding: each upper-case letter
// becomes '!' and its lower-case form.
func escapePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!' || r >= unicode.MaxASCII:
			return "", fmt.Errorf("module path %q: character %q not allowed", p, r)
		case 'A' <= r && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// checkFilePath applies the module zip format's rules for file names: slash
// separated, no empty, "." or ".." elements, no characters a module file
// name may not use, no element that Windows reserves.
func checkFilePath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("file %q: not a relative slash-separated path", p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return fmt.Errorf("file %q: element %q not allowed", p, elem)
		}
		for _, r := range elem {
			if r < ' ' || r == 0x7f || strings.ContainsRune("\"'*<>?`|\\:", r) || (r >= unicode.MaxASCII && !unicode.IsLetter(r)) {
				return fmt.Errorf("file %q: character %q not allowed in a module file name", p, r)
			}
		}
		short, _, _ := strings.Cut(elem, ".")
		switch strings.ToUpper(short) {
		case "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
			"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
			return fmt.Errorf("file %q: %q is a name Windows reserves", p, elem)
		}
	}
	return nil
}
