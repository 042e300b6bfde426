package skills

import (
	"fmt"
	"strings"
)

// DefaultIndexBudget is the prompt space the skills' index takes at most, in bytes.
const DefaultIndexBudget = 1200

// Index is the part of the system prompt that tells the model which skills
// exist: one line each, name and description, within budget bytes. A
// description is shortened before a skill is left out; the names of those
// that do not fit still close the index, so the model can read them.
func Index(list []*Skill, budget int) string {
	if len(list) == 0 {
		return ""
	}
	if budget <= 0 {
		budget = DefaultIndexBudget
	}
	// Every skill on a line of its own if they fit; else room is kept for
	// the line naming those left out.
	if idx, left := index(list, budget, 0); len(left) == 0 {
		return idx
	}
	idx, left := index(list, budget, min(80, budget/4))
	var b strings.Builder
	b.WriteString(idx)
	for i := range left {
		also := "\n- also: " + strings.Join(left[:len(left)-i], ", ")
		if i > 0 {
			also += fmt.Sprintf(" and %d more", i)
		}
		if b.Len()+len(also) <= budget {
			b.WriteString(also)
			break
		}
	}
	return b.String()
}

// index writes the head and as many skills' lines as fit in budget-reserve
// bytes, in order; it returns the names of the rest.
func index(list []*Skill, budget, reserve int) (string, []string) {
	head := "Skills (call @skill/read{name=\"...\"} for one's instructions before following it):"
	var b strings.Builder
	b.WriteString(head)
	// Each description gets an equal share; "\n- NAME: " is counted too.
	per := max((budget-len(head))/len(list)-5, 24)
	var left []string
	for _, s := range list {
		d := strings.Join(strings.Fields(s.Meta.Description), " ")
		if len(d) > per-len(s.Name()) {
			cut := max(per-len(s.Name())-3, 0)
			for cut > 0 && cut < len(d) && d[cut]&0xC0 == 0x80 {
				cut--
			}
			d = d[:cut] + "..."
		}
		line := fmt.Sprintf("\n- %s: %s", s.Name(), d)
		if len(left) > 0 || b.Len()+len(line) > budget-reserve {
			left = append(left, s.Name())
			continue
		}
		b.WriteString(line)
	}
	return b.String(), left
}
