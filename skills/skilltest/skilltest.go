// Package skilltest makes skill folders and archives for tests: a skill as
// a publisher would hand it over (a signed folder packed as .tar.gz).
package skilltest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawedge/clawedge/skills"
)

// Write writes files (path: content) as the folder root/name, the paths
// under scripts/ executable, and signs it with key when key is not nil.
func Write(root, name string, files map[string]string, key ed25519.PrivateKey) (string, error) {
	dir := filepath.Join(root, name)
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "scripts/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			return "", err
		}
	}
	if key != nil {
		if err := skills.Sign(dir, key); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Archive packs the folder dir as a .tar.gz whose one top folder is dir's name.
func Archive(dir string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	top := filepath.Base(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(filepath.Join(top, rel))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	return buf.Bytes(), err
}
