package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
)

// The search run's jobs read like a carrier's feed: titles built from a
// route, a freight and a role; descriptions of 150 to 350 words made of
// sentences about the pay, the home time, the equipment, the freight and
// the benefits, some of them (hazmat, tanker, TWIC) tied to the job's
// freight as a real posting's are; fields drawn with the skew of a real
// board (most jobs are for company drivers, few for students). Each job is
// a function of its number alone, so every run loads the same jobs.

// weighted is a value and how often it is drawn, against the others'.
type weighted[T any] struct {
	value  T
	weight int
}

// draw picks one of ws by weight.
func draw[T any](r *rand.Rand, ws []weighted[T]) T {
	total := 0
	for _, w := range ws {
		total += w.weight
	}
	n := r.IntN(total)
	for _, w := range ws {
		if n < w.weight {
			return w.value
		}
		n -= w.weight
	}
	return ws[len(ws)-1].value
}

func pick[T any](r *rand.Rand, vs []T) T { return vs[r.IntN(len(vs))] }

var (
	searchDriverTypes = []weighted[domain.DriverType]{{"Company Driver", 60}, {"Owner Operator", 25}, {"Student", 15}}
	searchFreights    = []weighted[domain.FreightType]{
		{"Dry Van", 30}, {"Refrigerated", 15}, {"Flatbed", 14}, {"Tanker", 9}, {"Intermodal", 6}, {"Box", 5},
		{"Drop and Hook", 5}, {"Car Hauler", 3}, {"Dry Bulk", 3}, {"Hopper Bottom", 3}, {"Oil Field", 3},
		{"Oversize Load", 2}, {"Yard Spotter", 2},
	}
	searchRoutes = []weighted[domain.RouteType]{{"OTR", 35}, {"Regional", 30}, {"Local", 20}, {"Dedicated", 10}, {"LTL", 5}}
	// searchStates weighs the states by their share of trucking jobs,
	// roughly; every state and DC has some.
	searchStates = func() []weighted[string] {
		heavy := map[string]int{"TX": 40, "CA": 30, "FL": 22, "GA": 20, "IL": 20, "OH": 20, "PA": 20, "TN": 16,
			"NC": 16, "IN": 14, "MO": 10, "AZ": 10, "NJ": 10, "MI": 10, "WI": 8, "AL": 8, "AR": 8, "KY": 8}
		var ws []weighted[string]
		for _, s := range domain.JobStates()[:51] { // the states and DC
			w := 2
			if h, ok := heavy[s]; ok {
				w = h
			}
			ws = append(ws, weighted[string]{s, w})
		}
		return ws
	}()
	searchCities = []string{"Springfield", "Riverside", "Franklin", "Greenville", "Bristol", "Clinton", "Fairview",
		"Salem", "Madison", "Georgetown", "Arlington", "Ashland", "Dover", "Oxford", "Jackson", "Burlington",
		"Manchester", "Milton", "Newport", "Auburn", "Dayton", "Lexington", "Milford", "Winchester", "Hudson"}
	searchRoles = []string{"CDL-A Driver", "Truck Driver", "Company Driver", "Owner Operator", "Driver Trainee", "Team Driver"}
)

// Sentences of a description, by theme; {f} is the freight, {r} the route.
var (
	paySentences = []string{
		"Top drivers earn more than {n} dollars a week with weekly direct deposit and detention pay.",
		"Pay is by the mile on practical miles, with stop pay, layover pay and a safety bonus every quarter.",
		"Guaranteed minimum weekly pay for your first month while you learn the lanes.",
		"Sign-on bonus paid in installments, plus referral bonuses for every driver you bring.",
		"Hourly pay with overtime after forty hours, and paid breakdown time.",
	}
	homeSentences = []string{
		"Home every weekend on our {r} runs, and home daily on the dedicated local lanes.",
		"Out two weeks, home for three days; we plan your home time around your family.",
		"Home most nights; routes stay within a few hundred miles of the terminal.",
		"Run {r} lanes through the Midwest and the Southeast with a consistent schedule.",
	}
	equipmentSentences = []string{
		"Late-model Freightliner and Kenworth trucks with automatic transmissions, inverters and APUs.",
		"Assigned equipment, rider and pet policy, and a shop that keeps the trucks well maintained.",
		"Trucks governed for safety, with in-cab navigation and electronic logs.",
		"Newer trailers, air-ride suspension and a fuel card accepted nationwide.",
	}
	benefitSentences = []string{
		"Health, dental and vision insurance from day one, life insurance and a 401k with a company match.",
		"Paid time off that grows with seniority, paid holidays and paid orientation at the terminal.",
		"Twenty-four hour dispatch support and a driver manager who answers the phone.",
		"Tuition reimbursement for students and a mentor for the first weeks on the road.",
	}
	freightSentences = map[domain.FreightType][]string{
		"Tanker": {
			"Haul liquid bulk chemicals in stainless tankers; a hazmat and tanker endorsement is required.",
			"Tanker experience preferred; we train drivers with a hazmat endorsement on smooth-bore food-grade tanks.",
			"Hazmat loads pay a premium; a TWIC card helps for the port and refinery stops.",
		},
		"Flatbed":       {"Flatbed loads of steel, lumber and building materials; tarping pay on every tarped load."},
		"Refrigerated":  {"Refrigerated freight for grocery and produce customers, mostly drop and hook."},
		"Dry Van":       {"No-touch dry van freight for retail customers, mostly drop and hook at distribution centers."},
		"Intermodal":    {"Intermodal container moves between the rail ramp and the port; a TWIC card is required."},
		"Oil Field":     {"Oil field work hauling water and sand; hazmat endorsement a plus, long hours and strong pay."},
		"Car Hauler":    {"Car hauler loads on a stinger, new vehicles from the plant to the dealers."},
		"Hopper Bottom": {"Hopper bottom grain hauling during harvest and fertilizer loads the rest of the year."},
		"Dry Bulk":      {"Dry bulk pneumatic tanker loads of plastics and cement; tanker endorsement required."},
		"Oversize Load": {"Oversize and heavy haul loads with permits and escorts arranged by our team."},
		"Yard Spotter":  {"Yard spotter work moving trailers at a busy distribution center, no overnight travel."},
		"Box":           {"Box truck deliveries to stores with a lift gate; a Class B license is enough."},
		"Drop and Hook": {"Drop and hook freight between terminals; no waiting at docks."},
	}
	closingSentences = []string{
		"Apply today and talk to a recruiter who drove for years.",
		"We are a family-owned carrier running since the seventies with a clean safety record.",
		"Clean MVR, pass a drug test and a background check.",
	}
)

// searchJob is job i of the search run; its ZIP code is one of zips.
func searchJob(i int, zips []string) store.JobFields {
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	freight := draw(r, searchFreights)
	route := draw(r, searchRoutes)
	driverType := draw(r, searchDriverTypes)
	title := fmt.Sprintf("%s %s %s", route, freight, pick(r, searchRoles))
	if freight == "Tanker" && r.IntN(3) == 0 {
		title = "Hazmat Tanker " + pick(r, searchRoles)
	}
	j := store.JobFields{
		ReferenceNumber: fmt.Sprintf("S%08d", i),
		Title:           title,
		City:            new(pick(r, searchCities)),
		State:           draw(r, searchStates),
		PostalCode:      new(zips[r.IntN(len(zips))]),
		DriverType:      driverType,
		FreightType:     freight,
		EmploymentType:  []domain.EmploymentType{"Full-Time"},
		RouteType:       []domain.RouteType{route},
		Description:     searchDescription(r, freight, route),
		Requirements:    new("<ul><li>Class A CDL</li><li>" + fmt.Sprint(1+r.IntN(3)) + " years of experience</li></ul>"),
		TwicOnly:        freight == "Intermodal" && r.IntN(2) == 0,
		LicenseClass:    new(domain.LicenseClass(pick(r, []string{"A", "A", "A", "B", "C"}))),
	}
	switch r.IntN(10) {
	case 0, 1, 2, 3, 4:
		j.PayFrequency = new(domain.PayFrequency("Per Mile"))
		j.PayMin = new(domain.Cents(45 + r.IntN(25)))
		j.PayMax = new(*j.PayMin + domain.Cents(r.IntN(15)))
	case 5, 6, 7:
		j.PayFrequency = new(domain.PayFrequency("Weekly"))
		j.PayMin = new(domain.Cents(100_000 + 1_000*r.IntN(150)))
		j.PayMax = new(*j.PayMin + domain.Cents(1_000*r.IntN(50)))
	case 8:
		j.PayFrequency = new(domain.PayFrequency("Hourly"))
		j.PayMin = new(domain.Cents(1_800 + 25*r.IntN(60)))
	}
	return j
}

// searchDescription is a description of 150 to 350 words, as HTML.
func searchDescription(r *rand.Rand, freight domain.FreightType, route domain.RouteType) string {
	fill := strings.NewReplacer("{f}", string(freight), "{r}", string(route), "{n}", fmt.Sprint(1200+100*r.IntN(15)))
	var b strings.Builder
	words := 0
	target := 150 + r.IntN(200)
	themes := [][]string{freightSentences[freight], paySentences, homeSentences, equipmentSentences, benefitSentences, closingSentences}
	for words < target {
		b.WriteString("<p>")
		for range 3 {
			s := fill.Replace(pick(r, pick(r, themes)))
			b.WriteString(s)
			b.WriteByte(' ')
			words += strings.Count(s, " ") + 1
		}
		b.WriteString("</p>")
	}
	return b.String()
}
