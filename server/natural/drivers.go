package natural

import (
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// driverOrders are the lenient sort keys of the DriverOrder values 1..n.
var driverOrders = Vocabulary[jobboardv2.DriverOrder]{[]string{"id", "name", "state", "driver_type", "sent"}}

// ListDriversFilter is the filters and order of a natural list request in
// the lenient form, without paging, which the gRPC list does by tokens.
func ListDriversFilter(r *jobboardv2.ListDriversRequest) *restv2.ListDriversRequest {
	out := &restv2.ListDriversRequest{
		Email: r.GetEmail(), FirstName: r.GetFirstName(), LastName: r.GetLastName(),
		JobTitle: r.GetJobTitle(), LivesWithinZip: r.GetLivesWithinZip(), Phone: r.GetPhone(), State: r.GetState(),
	}
	if c := optionalLabel(CertificationCodes, r.GetCertification()); c != nil {
		out.Certifications = *c
	}
	if d := optionalLabel(DriverTypes, r.GetDriverType()); d != nil {
		out.DriverType = *d
	}
	if r.SentAfter != nil {
		out.StartDate = rfc3339(r.GetSentAfter())
	}
	if r.SentBefore != nil {
		out.EndDate = rfc3339(r.GetSentBefore())
	}
	if r.HasJobApps != nil {
		out.HasJobApps = strconv.FormatBool(r.GetHasJobApps())
	}
	if r.GetLivesWithinRadiusMiles() != 0 {
		out.LivesWithinRadius = itoa(int64(r.GetLivesWithinRadiusMiles()))
	}
	if r.MinExperienceYears != nil {
		out.MinExperience = strconv.FormatFloat(r.GetMinExperienceYears(), 'f', -1, 64)
	}
	if len(r.GetStatuses()) > 0 {
		// UNSPECIFIED goes by its enum name, which the core then refuses
		// by name rather than as an empty word.
		out.Status = strings.Join(each(r.GetStatuses(), func(e jobboardv2.LeadStatus) string {
			if l, ok := LeadStatuses.Label(e); ok {
				return l
			}
			return e.String()
		}), ",")
	}
	if o := optionalLabel(driverOrders, r.GetOrder()); o != nil || r.GetDescending() {
		key := "id"
		if o != nil {
			key = *o
		}
		if r.GetDescending() {
			key = "-" + key
		}
		out.Sort = key
	}
	return out
}

// rfc3339 writes an instant with its full precision, in UTC.
func rfc3339(ts *timestamppb.Timestamp) string {
	return ts.AsTime().UTC().Format(time.RFC3339Nano)
}

// DriverSummary converts a driver as the list shows it.
func DriverSummary(d *restv2.DriverSummary) *jobboardv2.DriverSummary {
	return &jobboardv2.DriverSummary{
		Id: d.GetId(), FirstName: d.GetFirstName(), LastName: d.GetLastName(), Address: d.GetAddress(),
		Address2: d.Address2, City: d.GetCity(), State: d.GetState(), Zip: d.GetZip(), Email: d.GetEmail(),
		Phone: d.GetPhone(), DriverType: valueOf(DriverTypes, &d.DriverType), Experience: d.GetExperience(),
		Sent: timestamp(d.GetSent()), HasJobApps: d.GetHasJobApps(), Status: valueOf(LeadStatuses, d.Status),
	}
}

// DriverDetail converts a driver with every detail field.
func DriverDetail(d *restv2.DriverDetail) *jobboardv2.DriverDetail {
	out := &jobboardv2.DriverDetail{
		Id: d.GetId(), FirstName: d.GetFirstName(), LastName: d.GetLastName(), Address: d.GetAddress(),
		Address2: d.Address2, City: d.GetCity(), State: d.GetState(), Zip: d.GetZip(), Email: d.GetEmail(),
		Phone: d.GetPhone(), DriverType: valueOf(DriverTypes, &d.DriverType), Experience: d.GetExperience(),
		Sent: timestamp(d.GetSent()), HasJobApps: d.GetHasJobApps(),
		Certifications:    endorsements(d.GetEndorsement()),
		FreightExperience: d.FreightExperience, FreightPreferences: d.FreightPreferences,
		LicenseState: d.LicenseState, PreferredAssignments: d.PreferredAssignments,
		PreferredRegions: d.PreferredRegions, HasTeam: d.HasTeam, LicenseClass: d.LicenseClass,
		DateOfBirth: d.DateOfBirth, TwicCard: d.TwicCard, Accidents: d.Accidents,
		MovingViolations: d.MovingViolations, LastLicenseSuspension: d.LastLicenseSuspension,
		LastDui: d.LastDui, InterestedLeasePurchase: d.InterestedLeasePurchase, Teams: d.Teams,
		TrucksOwned: d.TrucksOwned, IsPremium: d.GetIsPremium(), Status: valueOf(LeadStatuses, d.Status),
	}
	for _, e := range d.GetEmploymentHistory() {
		out.EmploymentHistory = append(out.EmploymentHistory, &jobboardv2.Employment{Company: e.GetCompany(),
			State: e.GetState(), Phone: e.GetPhone(), StartDate: e.GetStartDate(), EndDate: e.EndDate})
	}
	for _, a := range d.GetJobApplications() {
		out.JobApplications = append(out.JobApplications, &jobboardv2.JobApplication{JobId: a.GetJobId(),
			Title: a.GetTitle(), Reference: a.GetReference(), IsDirectApp: a.GetIsDirectApp(),
			CreatedAt: timestamp(a.GetCreatedAt())})
	}
	return out
}

// endorsements reads the detail's endorsement text ("HAZMAT (H), Tank
// Vehicles (N)"), which the core writes from Certifications' labels.
func endorsements(text string) []jobboardv2.Certification {
	if text == "" {
		return nil
	}
	return values(Certifications, strings.Split(text, ", "))
}

// filterFields are the list parameters whose gRPC field has another name;
// the others are named alike in both forms.
var filterFields = map[string]string{
	"certifications":      "certification",
	"start_date":          "sent_after",
	"end_date":            "sent_before",
	"lives_within_radius": "lives_within_radius_miles",
	"min_experience":      "min_experience_years",
	"sort":                "order",
	"status":              "statuses",
}

// FilterField is the gRPC field of a list parameter of the lenient form, as
// the core names it in an error.
func FilterField(param string) string {
	if f, ok := filterFields[param]; ok {
		return f
	}
	return param
}
