// Package intake holds a driver application in the lenient form the
// board's validation checks: every value as text, as an import file gives
// it. The CLI fills it from a file in the detail representation; the gRPC
// intake converts its typed DriverApplication into it (package natural).
// Applications are stored from the checked result, never in this form.
package intake

// Application is a driver's application as submitted. The JSON names are
// those of an import file (the detail representation's).
type Application struct {
	FirstName  string  `json:"first_name"`
	LastName   string  `json:"last_name"`
	Address    string  `json:"address"`
	Address2   *string `json:"address2"`
	City       string  `json:"city"`
	State      string  `json:"state"`
	Zip        string  `json:"zip"`
	Email      string  `json:"email"`
	Phone      string  `json:"phone"`
	DriverType string  `json:"driver_type"`
	Experience string  `json:"experience"`
	// Sent is a date or date-time: YYYY-MM-DD, YYYY-MM-DDThh:mm:ss (UTC) or RFC 3339.
	Sent string `json:"sent"`
	// Endorsements are codes (T, H, N, X) or labels ("HAZMAT (H)").
	Endorsements            []string `json:"endorsements"`
	FreightExperience       *string  `json:"freight_experience"`
	FreightPreferences      *string  `json:"freight_preferences"`
	LicenseState            *string  `json:"license_state"`
	PreferredAssignments    *string  `json:"preferred_assignments"`
	PreferredRegions        *string  `json:"preferred_regions"`
	HasTeam                 *string  `json:"has_team"`
	LicenseClass            *string  `json:"license_class"`
	DateOfBirth             *string  `json:"date_of_birth"`
	TwicCard                *string  `json:"twic_card"`
	Accidents               *string  `json:"accidents"`
	MovingViolations        *string  `json:"moving_violations"`
	LastLicenseSuspension   *int32   `json:"last_license_suspension"`
	LastDUI                 *int32   `json:"last_dui"`
	InterestedLeasePurchase *string  `json:"interested_lease_purchase"`
	Teams                   *string  `json:"teams"`
	TrucksOwned             *string  `json:"trucks_owned"`
	IsPremium               bool     `json:"is_premium"`

	EmploymentHistory []Employment     `json:"employment_history"`
	JobApplications   []JobApplication `json:"job_applications"`
}

// Employment is one past employer; the dates are days, YYYY-MM-DD.
type Employment struct {
	Company   string  `json:"company"`
	State     string  `json:"state"`
	Phone     string  `json:"phone"`
	StartDate string  `json:"start_date"`
	EndDate   *string `json:"end_date"`
}

// JobApplication names one of the account's jobs the driver applied to.
type JobApplication struct {
	Reference   string `json:"reference"`
	IsDirectApp bool   `json:"is_direct_app"`
	// CreatedAt has the formats of Sent; empty means when the application was sent.
	CreatedAt string `json:"created_at"`
}
