package config

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fill repeats unit after prefix up to exactly size bytes (the file size
// cap), cutting the last repetition.
func fill(prefix, unit string, size int) []byte {
	b := []byte(prefix)
	for len(b) < size {
		b = append(b, unit...)
	}
	return b[:size]
}

// A file of deep nesting is refused before the YAML parser sees it, at the
// place it gets too deep, in bounded memory: 80 KB of "[" used to take
// 2.5 GB in the parser. Each file is the largest Load accepts.
func TestDeepNestingRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		line int
		col  int
	}{
		{"flow sequences", fill("", "[", maxFileSize), 1, maxDepth},
		{"flow mappings", fill("data_dir: ", "{a: ", maxFileSize), 1, 11 + 4*(maxDepth-1)},
		{"JSON style", fill("", `{"a":[`, maxFileSize), 1, 0},
		{"block sequences on one line", fill("", "- ", maxFileSize), 1, 2*maxDepth + 1},
		{"block mappings by indentation", deepBlock(maxFileSize), maxDepth + 1, maxDepth + 1},
		{"anchors and tags", fill("x: ", "&a !t [", maxFileSize), 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) != maxFileSize {
				t.Fatalf("test file is %d bytes", len(tc.data))
			}
			path := filepath.Join(t.TempDir(), "deep.yaml")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Load(path)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "nest deeper than 32 levels") {
				t.Fatalf("Load: %v, want a nesting error", err)
			}
			e := err.(*Error)
			if len(e.List) != 1 || e.List[0].File != path || e.List[0].Line != tc.line || (tc.col != 0 && e.List[0].Column != tc.col) {
				t.Errorf("got %v, want one problem at %d:%d", err, tc.line, tc.col)
			}
			// Reading the file takes about 2 MiB; the bound is the
			// issue's, far above what the check costs and far below
			// what parsing such a file would.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("refusing it allocated %d MB, want < 64", alloc>>20)
			}
		})
	}
}

// deepBlock nests block mappings one more space in on each line.
func deepBlock(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		b.WriteString(strings.Repeat(" ", i%2000) + "a:\n")
	}
	return b.Bytes()[:size]
}

// Nesting up to the bound (the top mapping is a level) is left to the
// parser, and brackets that are not YAML syntax (in quotes, comments,
// block scalars, plain text) do not count.
func TestNestingWithinBound(t *testing.T) {
	deep := strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1)
	for _, src := range []string{
		"x: " + deep + "\n",
		"x: \"" + strings.Repeat("[", 100) + "\"\n",
		"x: '" + strings.Repeat("{", 100) + "'\n",
		"x: 'it''s " + strings.Repeat("[", 100) + "'\n",
		"# " + strings.Repeat("[", 100) + "\nx: 1\n",
		"x: a" + strings.Repeat("[", 100) + "\n",
		"x: |\n  " + strings.Repeat("[", 100) + "\n  " + strings.Repeat("- ", 100) + "\ny: 1\n",
		"x: \"multi\n  line " + strings.Repeat("[", 100) + "\"\n",
		"x: [\"" + strings.Repeat("]", 100) + "\", " + deep[1:len(deep)-1] + "]\n",
		"a:\n  b:\n    - c: " + deep[2:len(deep)-2] + "\n",
	} {
		if _, ok := checkDepth([]byte(src)); !ok {
			t.Errorf("refused:\n%s", src)
		}
	}
	for _, src := range []string{
		"x: " + strings.Repeat("[", maxDepth) + "\n",
		"x: &a !t " + strings.Repeat("[", maxDepth) + "\n",
		"a:\n  b:\n    - c: " + deep[1:len(deep)-1] + "\n",
		"x: |\n  text\n" + strings.Repeat("- ", maxDepth+1) + "\n",
	} {
		if _, ok := checkDepth([]byte(src)); ok {
			t.Errorf("accepted:\n%s", src)
		}
	}
	// The configs shipped as examples are well within the bound.
	for _, name := range []string{"full.yaml", "example.yaml"} {
		if at, ok := checkDepth(readTestdata(t, name)); !ok {
			t.Errorf("%s refused at %v", name, at)
		}
	}
}

// Invalid UTF-8 is refused where it is, rather than turned into U+FFFD.
func TestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		src       string
		line, col int
		msg       string
	}{
		{"data_dir: \xff\xfe\n", 1, 11, "invalid UTF-8 (byte 0xFF)"},
		{"# é\ndata_dir: /é€\xc3(\n", 2, 14, "invalid UTF-8 (byte 0xC3)"},
		{"a: 1\r\rdata_dir: \"\xed\xa0\x80\"\n", 3, 12, "invalid UTF-8 (byte 0xED)"}, // a surrogate
		{"\ufeffdata_dir: x\x80\n", 1, 12, "invalid UTF-8 (byte 0x80)"},
		{"\x93", 1, 1, "invalid UTF-8 (byte 0x93)"},
	} {
		e := parseError(t, tc.src, nil)
		if len(e.List) != 1 || e.List[0].Line != tc.line || e.List[0].Column != tc.col || !strings.Contains(e.List[0].Msg, tc.msg) {
			t.Errorf("Parse(%q) = %v, want one problem at %d:%d: %s", tc.src, e, tc.line, tc.col, tc.msg)
		}
	}
}
