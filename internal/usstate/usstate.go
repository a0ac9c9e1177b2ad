// Package usstate holds the US states and DC a driver may live in, by
// two-letter code and full name: the one table the service's rules and
// the demo data read.
package usstate

import "strings"

// names are the 51 codes a driver may live in (the states and DC), with
// the full names a licence state is stored as.
var names = map[string]string{
	"AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California", "CO": "Colorado",
	"CT": "Connecticut", "DE": "Delaware", "FL": "Florida", "GA": "Georgia", "HI": "Hawaii", "ID": "Idaho",
	"IL": "Illinois", "IN": "Indiana", "IA": "Iowa", "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana",
	"ME": "Maine", "MD": "Maryland", "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota",
	"MS": "Mississippi", "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada",
	"NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York", "NC": "North Carolina",
	"ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
	"RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas",
	"UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington", "DC": "District of Columbia",
	"WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming",
}

// IsCode reports whether code is one of the codes, in upper case.
func IsCode(code string) bool {
	_, ok := names[code]
	return ok
}

// Name returns the full name of a state given its two-letter code or its
// name, in any case.
func Name(s string) (string, bool) {
	if name, ok := names[strings.ToUpper(s)]; ok {
		return name, true
	}
	for _, name := range names {
		if strings.EqualFold(name, s) {
			return name, true
		}
	}
	return "", false
}
