package domain

import "slices"

// ImportStatus is where a job import stands. The values are the words the
// API shows as data.status and the ones the job_imports.status column's
// CHECK constraint allows.
type ImportStatus string

// The import statuses, in the order of the gRPC JobImportStatus enum.
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

var importStatuses = []ImportStatus{ImportPending, ImportRunning, ImportComplete}

// ImportStatuses returns every import status, in the order of the gRPC
// JobImportStatus enum.
func ImportStatuses() []ImportStatus { return slices.Clone(importStatuses) }
