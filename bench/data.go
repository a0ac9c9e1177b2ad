package main

import (
	"encoding/json"
	"fmt"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
)

var (
	states   = []string{"TX", "CA", "GA", "OH", "PA", "IL", "TN", "NC", "FL", "AZ"}
	freights = []string{"Dry Van", "Refrigerated", "Flatbed", "Tanker", "Intermodal", "Box"}
)

const (
	// Each job's text differs (it names the job), as in a real feed; new
	// jobs bring texts the server has not seen before.
	description = "<p>Route %s: home <b>every weekend</b>. Late-model trucks with APUs, paid orientation, " +
		"weekly direct deposit, health, dental and vision from day one.</p><ul><li>No touch freight</li><li>Pet policy</li></ul>"
	requirements = "<ul><li>Class A CDL</li><li>1 year of experience</li></ul>"
)

// jobs are n realistic jobs with reference numbers prefix+i for i from
// start, already in the canonical form the service stores; title varies the
// content, so a second post with another title updates every job.
func jobs(start, n int, prefix, title string) []store.JobFields {
	out := make([]store.JobFields, n)
	for k := range n {
		i := start + k
		out[k] = store.JobFields{
			ReferenceNumber: fmt.Sprintf("%s%06d", prefix, i),
			Title:           fmt.Sprintf("%s %s", freights[i%len(freights)], title),
			City:            new("Springfield"),
			State:           states[i%len(states)],
			PostalCode:      new(fmt.Sprintf("%05d", 10000+i%80000)),
			DriverType:      "Company Driver",
			FreightType:     domain.FreightType(freights[i%len(freights)]),
			PayMin:          new(domain.Cents(55)),
			PayMax:          new(domain.Cents(68)),
			PayFrequency:    new(domain.PayFrequency("Per Mile")),
			EmploymentType:  []domain.EmploymentType{"Full-Time"},
			RouteType:       []domain.RouteType{"Regional"},
			Description:     fmt.Sprintf(description, fmt.Sprintf("%s%06d", prefix, i)),
			Requirements:    new(requirements),
			TwicOnly:        i%7 == 0,
			LicenseClass:    new(domain.LicenseClass("A")),
		}
	}
	return out
}

// jobsJSON is the jobs.json body of the same jobs.
func jobsJSON(start, n int, prefix, title string) []byte {
	return marshalJobs(jobs(start, n, prefix, title))
}

func marshalJobs(js []store.JobFields) []byte {
	type wireJob struct {
		ReferenceNumber string                  `json:"referenceNumber"`
		Title           string                  `json:"title"`
		City            *string                 `json:"city"`
		State           string                  `json:"state"`
		PostalCode      *string                 `json:"postalCode"`
		DriverType      domain.DriverType       `json:"driverType"`
		FreightType     domain.FreightType      `json:"freightType"`
		PayAmountMin    *string                 `json:"payAmountMin"`
		PayAmountMax    *string                 `json:"payAmountMax"`
		PayFrequency    *domain.PayFrequency    `json:"payFrequency"`
		EmploymentType  []domain.EmploymentType `json:"employmentType"`
		RouteType       []domain.RouteType      `json:"routeType"`
		Description     string                  `json:"description"`
		Requirements    *string                 `json:"requirements"`
		TwicOnly        bool                    `json:"twicOnly"`
		LicenseClass    *domain.LicenseClass    `json:"licenseClass"`
	}
	decimal := func(c *domain.Cents) *string {
		if c == nil {
			return nil
		}
		return new(c.Decimal())
	}
	out := make([]wireJob, len(js))
	for i, j := range js {
		out[i] = wireJob{j.ReferenceNumber, j.Title, j.City, j.State, j.PostalCode, j.DriverType, j.FreightType,
			decimal(j.PayMin), decimal(j.PayMax), j.PayFrequency, j.EmploymentType, j.RouteType, j.Description,
			j.Requirements, j.TwicOnly, j.LicenseClass}
	}
	b, _ := json.Marshal(out)
	return b
}
