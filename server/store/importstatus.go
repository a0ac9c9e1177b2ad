package store

// ImportStatus is where a job import stands. The values are the ones the
// job_imports.status column's CHECK constraint allows, and the words the
// API shows as data.status.
type ImportStatus string

const (
	// ImportPending is an import created and not yet started.
	ImportPending ImportStatus = "pending"
	// ImportRunning is an import a worker has started, perhaps more than
	// once, and not finished.
	ImportRunning ImportStatus = "running"
	// ImportComplete is an import whose results are recorded, by its run or
	// by its failure; it does not change again.
	ImportComplete ImportStatus = "complete"
)
