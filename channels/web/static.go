package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/binary"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// The assets are embedded gzipped (static/NAME.gz, written from assets/NAME
// by gen_static.go): 32 KB in the binary instead of 77, no http.FileServer
// (190 KB less arm64 binary in all), and browsers take them as they are.

//go:generate go run gen_static.go

//go:embed static
var staticFS embed.FS

// assetTypes are the Content-Types of the assets, by extension; another
// extension is not served.
var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".txt": "text/plain; charset=utf-8",
}

// assets serves /static/NAME from static/NAME.gz: as it is when the
// request takes gzip, decompressed when it does not. Only the flat names
// of the embedded set; no listing.
func assets(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	ctype := assetTypes[path.Ext(name)]
	if ctype == "" || strings.ContainsAny(name, `/\`) {
		http.NotFound(w, r)
		return
	}
	gz, err := staticFS.ReadFile("static/" + name + ".gz")
	if err != nil || len(gz) < 18 { // 18: a gzip member's header and trailer
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Vary", "Accept-Encoding")
	if acceptsGzip(strings.Join(r.Header.Values("Accept-Encoding"), ",")) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(gz)))
		if r.Method != http.MethodHead {
			w.Write(gz)
		}
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		http.Error(w, "a broken embedded asset", http.StatusInternalServerError)
		return
	}
	// The trailer's ISIZE: the source's length (one member, under 4 GB;
	// TestStaticMatchesAssets), which also bounds the copy.
	size := int64(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	if r.Method != http.MethodHead {
		io.CopyN(w, zr, size)
	}
}

// acceptsGzip says whether an Accept-Encoding value (RFC 9110 12.5.3)
// takes gzip: named (or x-gzip) with a q above 0, or, when not named, by
// "*" with a q above 0. No header, or a q that does not parse, is a no:
// the decompressed bytes are always acceptable.
func acceptsGzip(v string) bool {
	named, gzipOK, starOK := false, false, false
	for _, part := range strings.Split(v, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, val, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || !(f >= 0 && f <= 1) {
					f = 0
				}
				q = f
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			named = true
			gzipOK = gzipOK || q > 0
		case "*":
			starOK = q > 0
		}
	}
	if named {
		return gzipOK
	}
	return starOK
}
