// Package editdist measures how far apart two words are, for the "did you
// mean" hints of the command line and the config files: one measure, so
// that a misspelling is judged alike wherever it is made.
package editdist

// Distance is the edit distance of a and b in runes: insertions,
// deletions and substitutions, and a swap of two neighbours counts as one
// edit (the commonest typo, "comamnd", is one edit from "command", not two).
func Distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
