package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/truckjobs/jobboard/server/intake"
)

// parseDriverFile reads a JSON array of drivers in the detail representation.
// Derived fields (id, has_job_apps, job_id, title) are ignored; endorsement
// is the text form or a list of codes.
func parseDriverFile(data []byte) ([]*intake.Application, error) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of drivers: %w", err)
	}
	apps := make([]*intake.Application, len(raw))
	for i, entry := range raw {
		if e, ok := entry["endorsement"]; ok {
			codes, err := endorsementCodes(e)
			if err != nil {
				return nil, fmt.Errorf("[%d] endorsement: %w", i, err)
			}
			entry["endorsements"], _ = json.Marshal(codes)
			delete(entry, "endorsement")
		}
		b, _ := json.Marshal(entry)
		apps[i] = &intake.Application{}
		if err := json.Unmarshal(b, apps[i]); err != nil {
			return nil, fmt.Errorf("[%d]: %v", i, err)
		}
	}
	return apps, nil
}

// endorsementCodes reads "Doubles/Triples (T), HAZMAT (H)" or ["T", "H"].
func endorsementCodes(raw json.RawMessage) ([]string, error) {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var text *string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf("expected text such as \"HAZMAT (H)\" or a list of codes")
	}
	codes := []string{}
	if text == nil {
		return codes, nil
	}
	for _, part := range strings.Split(*text, ",") {
		if part = strings.TrimSpace(part); part != "" {
			codes = append(codes, part)
		}
	}
	return codes, nil
}
