//go:build ignore

// gen_static writes static/NAME.gz, the gzip of each assets/NAME, and
// removes any static/*.gz whose source is gone. Only static/ is embedded:
// the binary carries the assets compressed, as they are served. Run it
// with `go generate ./channels/web` after editing an asset;
// TestStaticMatchesAssets says when it is due.
//
// The output is byte-stable: best compression, no name and no mtime in
// the header.
package main

import (
	"bytes"
	"compress/gzip"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	srcs, err := os.ReadDir("assets")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll("static", 0o755); err != nil {
		log.Fatal(err)
	}
	keep := map[string]bool{}
	for _, de := range srcs {
		if de.IsDir() {
			log.Fatalf("assets/%s: a directory; the assets are flat", de.Name())
		}
		raw, err := os.ReadFile(filepath.Join("assets", de.Name()))
		if err != nil {
			log.Fatal(err)
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		w.Write(raw)
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
		out := de.Name() + ".gz"
		keep[out] = true
		if old, err := os.ReadFile(filepath.Join("static", out)); err == nil && bytes.Equal(old, z.Bytes()) {
			continue
		}
		if err := os.WriteFile(filepath.Join("static", out), z.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
		log.Printf("static/%s: %d bytes, from %d", out, z.Len(), len(raw))
	}
	outs, err := os.ReadDir("static")
	if err != nil {
		log.Fatal(err)
	}
	for _, de := range outs {
		if !keep[de.Name()] && strings.HasSuffix(de.Name(), ".gz") {
			if err := os.Remove(filepath.Join("static", de.Name())); err != nil {
				log.Fatal(err)
			}
			log.Printf("static/%s: removed, its source is gone", de.Name())
		}
	}
}
