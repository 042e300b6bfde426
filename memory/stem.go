package memory

// This file: the words an entry or a query is indexed by: split, lower-cased,
// the function words dropped, each reduced to a stem so that "lights",
// "lighting" and "lit up" meet "light".

import (
	"strings"
	"unicode"
)

// maxTerms bounds the terms taken from one text: an entry is bounded in bytes
// anyway; a query (a whole message) is cut here.
const maxTerms = 256

// terms are the stems of text's words, in order, stop words left out.
func terms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.Trim(strings.ToLower(w), "'")
		w = strings.TrimSuffix(w, "'s")
		if w == "" || stopWords[w] {
			continue
		}
		if i := strings.IndexByte(w, '\''); i > 0 {
			w = w[:i] // don't, garage's
		}
		out = append(out, stem(w))
		if len(out) == maxTerms {
			break
		}
	}
	return out
}

// stopWords carry no topic: articles, pronouns, auxiliaries, question words.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if of to in on at by for with from into onto
		about as is are was were be been being am do does did done doing have has had having
		i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
		this that these those there here what which who whom whose when where why how
		can could will would shall should may might must not no nor so than too very just also
		any all some each every s t d ll re ve m o y please tell know remind again ever`) {
		m[w] = true
	}
	return m
}()

// stem reduces an English word to a stem: a small suffix stripper after
// Porter's (plurals, -ed, -ing, -ly, common derivations), applied the same way
// to entries and queries, so both sides meet on the same stem even where the
// stem is not a word.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	// Plurals and the third person.
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "es") && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes")):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	// Tense and aspect: strip when a vowel stays before it.
	for _, suf := range []string{"ing", "ed"} {
		if base, ok := strings.CutSuffix(w, suf); ok && len(base) >= 3 && hasVowel(base) {
			w = undouble(base)
			break
		}
	}
	// Derivations, longest first.
	for _, r := range [][2]string{
		{"ational", "ate"}, {"ization", "ize"}, {"fulness", ""}, {"iveness", "ive"},
		{"ation", "ate"}, {"ness", ""}, {"ment", ""}, {"ful", ""}, {"able", ""}, {"ible", ""},
		{"ly", ""}, {"er", ""},
	} {
		if base, ok := strings.CutSuffix(w, r[0]); ok && len(base)+len(r[1]) >= 3 && hasVowel(base) {
			w = undouble(base + r[1])
			break
		}
	}
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "e")
	}
	if len(w) > 3 && strings.HasSuffix(w, "y") && !isVowel(w[len(w)-2]) {
		w = w[:len(w)-1] + "i"
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func isVowel(c byte) bool { return strings.IndexByte("aeiouy", c) >= 0 }

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// undouble drops a doubled final consonant left by a suffix: "runn" -> "run",
// but "fall", "kiss" and "buzz" keep theirs.
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !isVowel(w[n-1]) && strings.IndexByte("lsz", w[n-1]) < 0 {
		return w[:n-1]
	}
	return w
}
