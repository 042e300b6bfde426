// Package modelfiles fetches, lists and removes the GGUF model files in a
// models folder (data_dir/models by default): a small catalog of known
// models with their sizes and sha256 sums, a resumable verified download,
// and the bookkeeping around it. Pure Go, no cgo.
//
// A download goes to NAME.part next to the target. It is resumed with an
// HTTP Range request, hashed as it streams (the hash of a resumed download
// covers the bytes already on disk), then checked for size, sha256 and a
// valid GGUF header, synced and renamed into place: the models folder never
// holds a half-written or unverified NAME.
package modelfiles

import (
	"strings"
)

// Entry is one model of the catalog.
type Entry struct {
	Name   string // what `clawedge model pull` takes: "qwen2.5-0.5b-q4_k_m"
	Model  string // the upstream model: "Qwen2.5-0.5B-Instruct"
	Quant  string // "Q4_K_M"
	File   string // the installed file name, as upstream names it
	URL    string
	Size   int64  // bytes
	SHA256 string // lowercase hex; "" would mean "unknown": Pull refuses such an entry
}

// The official Qwen GGUF repositories on Hugging Face. Sizes and sums are the
// git-LFS object ids and sizes of the files there (the "upload weights"
// commits of September 2024, unchanged since); see the catalog test for
// where each was read.
const hf = "https://huggingface.co/Qwen/"

var catalog = []Entry{
	{
		Name: "qwen2.5-0.5b-q4_k_m", Model: "Qwen2.5-0.5B-Instruct", Quant: "Q4_K_M",
		File: "qwen2.5-0.5b-instruct-q4_k_m.gguf",
		URL:  hf + "Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf",
		Size: 491_400_032, SHA256: "74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db",
	},
	{
		Name: "qwen2.5-0.5b-q8_0", Model: "Qwen2.5-0.5B-Instruct", Quant: "Q8_0",
		File: "qwen2.5-0.5b-instruct-q8_0.gguf",
		URL:  hf + "Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q8_0.gguf",
		Size: 675_710_816, SHA256: "ca59ca7f13d0e15a8cfa77bd17e65d24f6844b554a7b6c12e07a5f89ff76844e",
	},
	{
		Name: "qwen2.5-1.5b-q4_k_m", Model: "Qwen2.5-1.5B-Instruct", Quant: "Q4_K_M",
		File: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
		URL:  hf + "Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf",
		Size: 1_117_320_736, SHA256: "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
	},
	{
		Name: "qwen2.5-1.5b-q8_0", Model: "Qwen2.5-1.5B-Instruct", Quant: "Q8_0",
		File: "qwen2.5-1.5b-instruct-q8_0.gguf",
		URL:  hf + "Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q8_0.gguf",
		Size: 1_894_532_128, SHA256: "d7efb072e7724d25048a4fda0a3e10b04bdef5d06b1403a1c93bd9f1240a63c8",
	},
	{
		Name: "qwen2.5-3b-q4_k_m", Model: "Qwen2.5-3B-Instruct", Quant: "Q4_K_M",
		File: "qwen2.5-3b-instruct-q4_k_m.gguf",
		URL:  hf + "Qwen2.5-3B-Instruct-GGUF/resolve/main/qwen2.5-3b-instruct-q4_k_m.gguf",
		Size: 2_104_932_768, SHA256: "626b4a6678b86442240e33df819e00132d3ba7dddfe1cdc4fbb18e0a9615c62d",
	},
	{
		Name: "qwen2.5-3b-q8_0", Model: "Qwen2.5-3B-Instruct", Quant: "Q8_0",
		File: "qwen2.5-3b-instruct-q8_0.gguf",
		URL:  hf + "Qwen2.5-3B-Instruct-GGUF/resolve/main/qwen2.5-3b-instruct-q8_0.gguf",
		Size: 3_616_088_480, SHA256: "6dcc22694c8654b045ec40bbe350212b88893fd9010e8474bae5b19a43578ba1",
	},
}

// Catalog returns the known models, smallest first.
func Catalog() []Entry { return append([]Entry(nil), catalog...) }

// Names returns the catalog's names.
func Names() []string {
	names := make([]string, len(catalog))
	for i, e := range catalog {
		names[i] = e.Name
	}
	return names
}

// Lookup finds a catalog entry by its name or its file name, ignoring case.
func Lookup(name string) (Entry, bool) {
	for _, e := range catalog {
		if strings.EqualFold(name, e.Name) || strings.EqualFold(name, e.File) {
			return e, true
		}
	}
	return Entry{}, false
}

// LookupURL finds the catalog entry downloaded from url, so that a pull by
// URL of a known file is verified all the same.
func LookupURL(url string) (Entry, bool) {
	for _, e := range catalog {
		if url == e.URL {
			return e, true
		}
	}
	return Entry{}, false
}

// Match is the catalog entry an installed file is: same file name and same
// size. (Hashing gigabytes on every `model list` would take minutes on a
// board; the download already verified the sum.)
func Match(file string, size int64) (Entry, bool) {
	for _, e := range catalog {
		if file == e.File && size == e.Size {
			return e, true
		}
	}
	return Entry{}, false
}
