package jobs

// For the tests of the jobs_test package.

func (s Store) Load(workspace, id string) (*Record, error)    { return s.load(workspace, id) }
func (s Store) CreateOutput(id string) (*OutputWriter, error) { return s.createOutput(id) }
func (s Store) RecordPath(workspace, id string) string        { return s.recordPath(workspace, id) }
func (s Store) OutputPath(id string) string                   { return s.outputPath(id) }

func (s Store) Update(workspace, id string, fn func(*Record) bool) (*Record, error) {
	return s.update(workspace, id, fn)
}

const MaxPromptBytes = maxPromptBytes

func (r *Record) Project() HistoryEntry { return r.project() }
