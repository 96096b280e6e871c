package dispatcher

// ProgressBuffer exposes progressBuffer to the external tests.
const ProgressBuffer = progressBuffer

// Stats is what a table counted, for the package's tests.
type Stats = stats

// Stats returns what the table counted. Read it on the actor.
func (t *Table) Stats() Stats { return t.stats }
