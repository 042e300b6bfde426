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

// A hostile file is refused before the YAML parser sees it, at the place
// it goes wrong, in bounded memory: 80 KB of "[" used to take 2.5 GB in the
// parser, 1 MiB of "a," 570 MB. Each file is the largest Parse accepts; at
// 1 MiB, the size the issue was found with, Load refuses it by its size.
func TestHostileFilesRefused(t *testing.T) {
	deep := "collections nest deeper than 32 levels"
	many := "more than 20000 YAML elements"
	for _, tc := range []struct {
		name, prefix, unit string
		msg                string
		line, col          int // 0: anywhere
	}{
		{"flow sequences", "", "[", deep, 1, maxDepth},
		{"flow mappings", "data_dir: ", "{a: ", deep, 1, 11 + 4*(maxDepth-1)},
		{"JSON style", "", `{"a":[`, deep, 1, 0},
		{"block sequences on one line", "", "- ", deep, 1, 2*maxDepth + 1},
		{"block mappings by indentation", "", "", deep, maxDepth + 1, maxDepth + 1},
		{"anchors and tags", "x: ", "&a !t [", deep, 1, 0},
		{"flat flow sequences", "x: [", "[],", many, 1, 0},
		{"flat block mapping", "", "a: b\n", many, 0, 0},
		{"unclosed flow sequence", "x: [", "a,", many, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := deepBlock(maxFileSize)
			if tc.unit != "" {
				data = fill(tc.prefix, tc.unit, maxFileSize)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse(data, "hostile.yaml", nil)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Parse: %.300v, want %q", err, tc.msg)
			}
			e := err.(*Error)
			if p := e.List[0]; len(e.List) != 1 || (tc.line != 0 && p.Line != tc.line) || (tc.col != 0 && p.Column != tc.col) {
				t.Errorf("got %v, want one problem at %d:%d", err, tc.line, tc.col)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("refusing it allocated %d MB, want < 64", alloc>>20)
			}

			path := filepath.Join(t.TempDir(), "hostile.yaml")
			if err := os.WriteFile(path, fill(string(data), "\n"+tc.unit+"a:", 1<<20), 0o600); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&before)
			_, err = Load(path)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), path+":1:1: file is larger than 256 KiB") {
				t.Errorf("Load of 1 MiB: %.300v", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("refusing 1 MiB allocated %d MB, want < 64", alloc>>20)
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
		if _, sh := checkShape([]byte(src)); sh != shapeOK {
			t.Errorf("refused:\n%s", src)
		}
	}
	for _, src := range []string{
		"x: " + strings.Repeat("[", maxDepth) + "\n",
		"x: &a !t " + strings.Repeat("[", maxDepth) + "\n",
		"a:\n  b:\n    - c: " + deep[1:len(deep)-1] + "\n",
		"x: |\n  text\n" + strings.Repeat("- ", maxDepth+1) + "\n",
	} {
		if _, sh := checkShape([]byte(src)); sh != tooDeep {
			t.Errorf("accepted:\n%s", src)
		}
	}
	// The configs shipped as examples are well within the bound.
	for _, name := range []string{"full.yaml", "example.yaml"} {
		if at, sh := checkShape(readTestdata(t, name)); sh != shapeOK {
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

// A syntax error in a large file costs no more than parsing it: the YAML
// library's own message (with its excerpt) took memory quadratic in the
// file, 853 MB for 40 KB of an unclosed "[a,a,...".
func TestSyntaxErrorInLargeFile(t *testing.T) {
	for _, tc := range []struct {
		name, unit string
		n          int
	}{
		{"many short items", "a,", maxElements - 100},
		{"long items", strings.Repeat("a", 40) + ",", maxFileSize / 42},
		{"nesting within the bound", strings.Repeat("[", maxDepth-3) + "a" + strings.Repeat("]", maxDepth-3) + ",", maxElements / (2*maxDepth - 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte("x: [" + strings.Repeat(tc.unit, tc.n)) // never closed
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse(data, "big.yaml", nil)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "big.yaml:1:") || strings.Contains(err.Error(), "more than") {
				t.Fatalf("Parse: %.200v, want a syntax error", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("refusing it allocated %d MB, want < 64", alloc>>20)
			}
		})
	}
}
