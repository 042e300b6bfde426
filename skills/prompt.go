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
	head := "Skills (call @skill/read{name=\"...\"} for one's instructions before following it):\n"
	var b strings.Builder
	b.WriteString(head)
	per := max((budget-len(head))/len(list)-8, 24)
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
		line := fmt.Sprintf("- %s: %s\n", s.Name(), d)
		if b.Len()+len(line) > budget {
			left = append(left, s.Name())
			continue
		}
		b.WriteString(line)
	}
	if len(left) > 0 {
		b.WriteString("- also: " + strings.Join(left, ", ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
