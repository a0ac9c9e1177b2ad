package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/truckjobs/jobboard/server/intake"
)

// parseDriverFile reads a JSON array of drivers in the detail representation.
// Derived fields (id, has_job_apps, job_id, title) are ignored; endorsement
// is the text form or a list of codes, and replaces endorsements when both
// are given. Each entry is decoded once, as it is read: a file of 100,000
// drivers is tens of megabytes.
func parseDriverFile(data []byte) ([]*intake.Application, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errors.New("not a JSON array of drivers")
	}
	var apps []*intake.Application
	for i := 0; dec.More(); i++ {
		var entry struct {
			intake.Application
			Endorsement json.RawMessage `json:"endorsement"`
		}
		if err := dec.Decode(&entry); err != nil {
			return nil, fmt.Errorf("[%d]: %v", i, err)
		}
		if entry.Endorsement != nil {
			codes, err := endorsementCodes(entry.Endorsement)
			if err != nil {
				return nil, fmt.Errorf("[%d] endorsement: %w", i, err)
			}
			entry.Endorsements = codes
		}
		apps = append(apps, &entry.Application)
	}
	if _, err := dec.Token(); err == io.EOF {
		return nil, errors.New("not a JSON array of drivers: the file ends before the array does")
	} else if err != nil {
		return nil, fmt.Errorf("not a JSON array of drivers: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a JSON array of drivers: more follows the array")
	}
	if apps == nil {
		apps = []*intake.Application{}
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
