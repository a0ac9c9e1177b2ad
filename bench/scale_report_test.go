package main

import (
	"encoding/json"
	"testing"
)

// The plans are shortened from those of the first full scale run at
// 1,000,000 applications: a parallel count, and the radius page whose
// filter discards most of what it reads.
const (
	parallelCount = `{"Node Type": "Aggregate", "Actual Rows": 1, "Actual Loops": 1, "Plans": [
		{"Node Type": "Gather", "Workers Launched": 2, "Actual Rows": 3, "Actual Loops": 1, "Plans": [
			{"Node Type": "Aggregate", "Actual Rows": 1, "Actual Loops": 3, "Plans": [
				{"Node Type": "Index Only Scan", "Index Name": "applications_endorsement_x_idx",
				 "Actual Rows": 83361, "Actual Loops": 3}]}]}]}`
	filteredPage = `{"Node Type": "Sort", "Actual Rows": 100, "Actual Loops": 1, "Plans": [
		{"Node Type": "Nested Loop", "Actual Rows": 100, "Actual Loops": 1, "Plans": [
			{"Node Type": "Index Scan", "Index Name": "applications_driver_idx", "Actual Rows": 69,
			 "Rows Removed by Filter": 1193, "Actual Loops": 3},
			{"Node Type": "Bitmap Heap Scan", "Relation Name": "applications", "Actual Rows": 1, "Actual Loops": 100, "Plans": [
				{"Node Type": "Bitmap Index Scan", "Index Name": "applications_pkey", "Actual Rows": 1, "Actual Loops": 100}]}]}]}`
	filteredPageText = "Sort  (cost=1..2 rows=100 width=233)\n  Sort Key: p.driver_id\n  Sort Method: quicksort  Memory: 44kB\n  ->  Nested Loop"
)

func TestPlanFacts(t *testing.T) {
	tests := []struct {
		name, json, text     string
		rows                 float64
		parallel, sortedRows string
	}{
		{"parallel count", parallelCount, "", 250083, " with 2 parallel workers", ""},
		// 3 loops of 69 returned and 1,193 discarded, and 100 probes by
		// bitmap counted once, at the heap.
		{"filtered page", filteredPage, filteredPageText, 3*(69+1193) + 100, "", " (sort of 100 by quicksort)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p plan
			if err := json.Unmarshal([]byte(tt.json), &p.root); err != nil {
				t.Fatal(err)
			}
			if got := rowsRead(p); got != tt.rows {
				t.Errorf("rowsRead = %v, want %v", got, tt.rows)
			}
			if got := parallelText(p); got != tt.parallel {
				t.Errorf("parallelText = %q, want %q", got, tt.parallel)
			}
			if got := sortText(p, tt.text); got != tt.sortedRows {
				t.Errorf("sortText = %q, want %q", got, tt.sortedRows)
			}
		})
	}
}
