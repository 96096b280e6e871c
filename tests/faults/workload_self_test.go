package faults_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLoopPicks: a loop calls its one tool with its arguments; by
// default it mixes reads into its increments, about one call in three,
// picking the same way each run.
func TestLoopPicks(t *testing.T) {
	const calls = 300
	picks := func(l loop) map[string]int {
		next := l.picker()
		count := map[string]int{}
		for range calls {
			tool, args := next()
			if tool == "test_echo" {
				assert.Equal(t, map[string]any{"text": "hi"}, args)
			} else {
				assert.Nil(t, args, tool)
			}
			count[tool]++
		}
		return count
	}
	a := &session{name: "a"}

	echo := picks(loop{s: a, tool: "test_echo", args: map[string]any{"text": "hi"}})
	assert.Equal(t, map[string]int{"test_echo": calls}, echo)

	mix := picks(loop{s: a})
	assert.Equal(t, calls, mix[counterTool]+mix[counterGetTool])
	assert.InDelta(t, calls/3, mix[counterGetTool], calls/10, "about one call in three reads: %v", mix)
	assert.Equal(t, mix, picks(loop{s: a}), "the same picks each run")

	only := picks(loop{s: a, tools: []string{counterGetTool}})
	assert.Equal(t, map[string]int{counterGetTool: calls}, only)
}
