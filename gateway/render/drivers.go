package render

import (
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// driverListFields are the fields the list shows, which the detail begins with.
type driverListFields interface {
	GetId() int64
	GetFirstName() string
	GetLastName() string
	GetAddress() string
	GetCity() string
	GetState() string
	GetZip() string
	GetEmail() string
	GetPhone() string
	GetDriverType() string
	GetExperience() string
	GetSent() string
	GetHasJobApps() bool
}

// writeDriverSummary writes the list fields of a driver; address2 is the
// one optional field, passed as the pointer it is.
func writeDriverSummary(w wire.Writer, d driverListFields, address2 *string) {
	w.Int("id", d.GetId())
	w.String("first_name", d.GetFirstName())
	w.String("last_name", d.GetLastName())
	w.String("address", d.GetAddress())
	w.NullableString("address2", address2)
	w.String("city", d.GetCity())
	w.String("state", d.GetState())
	w.String("zip", d.GetZip())
	w.String("email", d.GetEmail())
	w.String("phone", d.GetPhone())
	w.String("driver_type", d.GetDriverType())
	w.String("experience", d.GetExperience())
	w.String("sent", d.GetSent())
	w.Bool("has_job_apps", d.GetHasJobApps())
}

// writeDriverDetail writes every field of the retrieve representation.
func writeDriverDetail(w wire.Writer, d *restv2.DriverDetail) {
	w.BeginObject("driver")
	writeDriverSummary(w, d, d.Address2)
	w.String("endorsement", d.Endorsement)
	w.NullableString("freight_experience", d.FreightExperience)
	w.NullableString("freight_preferences", d.FreightPreferences)
	w.NullableString("license_state", d.LicenseState)
	w.NullableString("preferred_assignments", d.PreferredAssignments)
	w.NullableString("preferred_regions", d.PreferredRegions)
	w.NullableString("has_team", d.HasTeam)
	w.NullableString("license_class", d.LicenseClass)
	w.NullableString("date_of_birth", d.DateOfBirth)
	w.NullableString("twic_card", d.TwicCard)
	w.NullableString("accidents", d.Accidents)
	w.NullableString("moving_violations", d.MovingViolations)
	w.NullableInt("last_license_suspension", int64Of(d.LastLicenseSuspension))
	w.NullableInt("last_dui", int64Of(d.LastDui))
	w.NullableString("interested_lease_purchase", d.InterestedLeasePurchase)
	w.NullableString("teams", d.Teams)
	w.NullableString("trucks_owned", d.TrucksOwned)
	w.BeginList("employment_history")
	for _, e := range d.EmploymentHistory {
		w.BeginObject("employment")
		w.String("company", e.Company)
		w.String("state", e.State)
		w.String("phone", e.Phone)
		w.String("start_date", e.StartDate)
		w.NullableString("end_date", e.EndDate)
		w.EndObject()
	}
	w.EndList()
	w.BeginList("job_applications")
	for _, j := range d.JobApplications {
		w.BeginObject("job_application")
		w.Int("job_id", j.JobId)
		w.String("title", j.Title)
		w.String("reference", j.Reference)
		w.Bool("is_direct_app", j.IsDirectApp)
		w.String("created_at", j.CreatedAt)
		w.EndObject()
	}
	w.EndList()
	w.Bool("is_premium", d.IsPremium)
	writeIncluded(w, d.Status)
	w.EndObject()
}

// writeIncluded writes the members a driver has only when include= asked
// for them, after the v2.0 members, whose order stays as it was.
func writeIncluded(w wire.Writer, status *string) {
	if status != nil {
		w.String("status", *status)
	}
}
