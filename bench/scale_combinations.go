package main

import (
	"net/url"
	"strings"
)

// The scale run measures, beside each filter alone, the combinations an
// employer types: two and three filters, each in every sort order, with
// the values of scenario 4's single filters (the most common state, driver
// type, certification and names, the last 30 days, the median
// experience), which make them the widest matches of their kind.

// combinationFilters are the combinations, by the parameters of the
// single-filter cases they take their values from.
var combinationFilters = [][]string{
	{"state", "driver_type"},
	{"state", "certifications"},
	{"driver_type", "has_job_apps"},
	{"first_name", "state"},
	{"last_name", "driver_type"},
	{"min_experience", "state"},
	{"start_date", "state"},
	{"job_title", "state"},
	{"status", "state"},
	{"lives_within_radius", "driver_type"},
	{"state", "driver_type", "certifications"},
	{"driver_type", "has_job_apps", "min_experience"},
	{"first_name", "state", "has_job_apps"},
	{"start_date", "driver_type", "has_job_apps"},
	{"status", "driver_type", "has_job_apps"},
}

// combinationSorts are every sort order of the list.
var combinationSorts = []string{"id", "name", "state", "driver_type", "-sent"}

// combinationCases builds the combinations from the single-filter cases
// (driverCases), each in every sort order.
func combinationCases(single []driverCase) []driverCase {
	values := map[string]url.Values{} // a single filter's parameters, by its first
	for _, c := range single {
		for k := range c.query {
			if k != "lives_within_zip" {
				values[k] = c.query
			}
		}
	}
	var out []driverCase
	for _, params := range combinationFilters {
		for _, sort := range combinationSorts {
			q := url.Values{}
			var shown []string
			for _, p := range params {
				for k, v := range values[p] {
					q[k] = v
					shown = append(shown, k+"="+v[0])
				}
			}
			q.Set("sort", sort)
			shown = append(shown, "sort="+sort)
			out = append(out, driverCase{name: strings.Join(shown, " "), query: q,
				key: strings.Join(params, " & ") + " sort=" + sort})
		}
	}
	return out
}
