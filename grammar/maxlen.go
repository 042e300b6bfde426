package grammar

// MaxReply bounds the bytes of the longest reply a spec's constraint admits,
// and so the tokens (a token is at least one byte). A reply budget that size
// on top of any thinking lets every call the constraint allows close: a weak
// model that fills each string to its bound is not cut off mid-call. ok is
// false when the answer is unbounded (free text, an unbounded repetition).
// A think section is the model's own and not counted.
func MaxReply(spec Spec) (bytes int, ok bool) {
	root, err := buildAnswer(spec)
	if err != nil {
		return 0, false
	}
	return replyLen(root)
}

func replyLen(n node) (int, bool) {
	switch n := n.(type) {
	case lit:
		return len(n), true
	case class:
		return 1, true
	case utf8Char:
		return 4, true
	case seq:
		return replyLenSum(n)
	case alt:
		worst := 0
		for _, x := range n {
			l, ok := replyLen(x)
			if !ok {
				return 0, false
			}
			worst = max(worst, l)
		}
		return worst, true
	case rep:
		if n.max < 0 {
			return 0, false
		}
		l, ok := replyLen(n.n)
		return l * n.max, ok
	case object:
		total := 0
		for _, f := range n.fields {
			l, ok := replyLen(f.value)
			if !ok {
				return 0, false
			}
			total += len(n.sep) + len(f.key) + l
		}
		return total, true
	case rule:
		return replyLen(n.n)
	}
	return 0, false // until: any text
}

func replyLenSum(ns []node) (int, bool) {
	total := 0
	for _, x := range ns {
		l, ok := replyLen(x)
		if !ok {
			return 0, false
		}
		total += l
	}
	return total, true
}
