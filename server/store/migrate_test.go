package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestMigrationCopiesDriverProfiles: migration 0008 gives each account that
// a driver applied to a copy of the profile and employment history the
// drivers table held, keeps each account's own sent and job applications,
// the filters find the driver by the copied values, and drivers is left
// with the identity alone.
func TestMigrationCopiesDriverProfiles(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	// Back to the schema of migration 0007.
	if _, err := s.DB().ExecContext(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MigrateUpTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	a, b := storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID
	if err := postOldJobs(ctx, s, a, job("J1")); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := s.DB().GetContext(ctx, &id, `
		INSERT INTO drivers (email, email_key, first_name_key, last_name_key, first_name, last_name, address,
		                     city, state, zip, phone, driver_type, experience, endorsements, accidents,
		                     date_of_birth, last_dui, is_premium, profile_sent)
		VALUES ('Pat@example.com', 'pat@example.com', 'pat', 'quinn', 'Pat', 'Quinn', '1 Main St', 'Omaha',
		        'NE', '68102', '402-555-0100', 'Student', '2', '{H}', 'none', '1990-02-03', 2012, true,
		        '2026-02-01T00:00:00Z')
		RETURNING id`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO employment_history (driver_id, position, company, state, phone, start_date, end_date)
		  VALUES ($1, 1, 'AlphaCo', 'NE', '4025550101', '2020-01-01', NULL),
		         ($1, 2, 'BravoCo', 'IA', '5155550102', '2018-01-01', '2019-12-31')`, []any{id}},
		{`INSERT INTO applications (account_id, driver_id, sent, state, driver_type, email_lower, phone_digits,
		                            first_name_lower, last_name_lower, experience_years, endorsements, has_job_apps)
		  VALUES ($2, $1, '2026-01-01T00:00:00Z', 'NE', 'Student', 'pat@example.com', '4025550100', 'pat', 'quinn', 2, '{H}', true),
		         ($3, $1, '2026-02-01T00:00:00Z', 'NE', 'Student', 'pat@example.com', '4025550100', 'pat', 'quinn', 2, '{H}', false)`,
			[]any{id, a, b}},
		{`INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
		  SELECT $2, $1, id, true, '2026-01-01T00:00:00Z', lower(title) FROM jobs WHERE reference_number = 'J1'`,
			[]any{id, a}},
	} {
		if _, err := s.DB().ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}

	applied, err := s.MigrateUpTo(ctx, 8)
	if err != nil || len(applied) == 0 || applied[0] != "0008_driver_profiles_per_account.sql" {
		t.Fatalf("migrate: %v %v", applied, err)
	}
	// The rest, which the store's code needs: 0015 also counts the copied
	// rows, which the list's count by state then reads.
	if _, err := s.MigrateUpTo(ctx, store.LatestVersion()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		account int64
		sent    time.Time
		jobApps int
	}{
		{"account A", a, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 1},
		{"account B", b, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := s.Driver(ctx, tt.account, id)
			if err != nil {
				t.Fatal(err)
			}
			p := d.DriverProfile
			if p.Email != "Pat@example.com" || p.Address != "1 Main St" || p.State != "NE" || p.Phone != "402-555-0100" ||
				p.Accidents == nil || *p.Accidents != "none" || p.DateOfBirth == nil || *p.DateOfBirth != "1990-02-03" ||
				p.LastDUI == nil || *p.LastDUI != 2012 || !p.IsPremium || !slices.Equal(p.Endorsements, []string{"H"}) {
				t.Errorf("profile: %+v", p)
			}
			if len(d.Employment) != 2 || d.Employment[0].Company != "AlphaCo" || d.Employment[1].EndDate == nil {
				t.Errorf("employment: %+v", d.Employment)
			}
			if !d.Sent.Equal(tt.sent) || len(d.JobApps) != tt.jobApps || d.HasJobApps != (tt.jobApps > 0) {
				t.Errorf("sent %v, job applications %+v", d.Sent, d.JobApps)
			}
			items, total, err := s.ListDrivers(ctx, tt.account, store.DriverFilter{State: "NE", Sort: "id", Limit: 10})
			if err != nil || total != 1 || len(items) != 1 || items[0].City != "Omaha" || items[0].Zip != "68102" {
				t.Errorf("list by state: %+v of %d, %v", items, total, err)
			}
		})
	}
	var columns []string
	if err := s.DB().SelectContext(ctx, &columns, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'drivers' ORDER BY ordinal_position`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(columns, []string{"id", "email_key", "created_at"}) {
		t.Errorf("drivers keeps %v", columns)
	}
}

// TestLargeJSONColumnsUseLZ4: migration 0020 has the server compress an
// import's results and an event's data with lz4 (these machines' servers
// are built with it), and a value written afterwards is stored so and reads
// back whole.
func TestLargeJSONColumnsUseLZ4(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	for _, column := range []struct{ table, name string }{{"job_imports", "results"}, {"events", "data"}} {
		var method string
		if err := s.DB().GetContext(ctx, &method, `SELECT attcompression FROM pg_attribute
			WHERE attrelid = $1::regclass AND attname = $2`, column.table, column.name); err != nil {
			t.Fatal(err)
		}
		if method != "l" {
			t.Errorf("%s.%s: compression %q, want l (lz4)", column.table, column.name, method)
		}
	}
	// A value large enough to be compressed (over 2 kB), read back as stored.
	account := storetest.NewAccount(t, s, "A").AccountID
	value := "[" + strings.Repeat(`{"index":1,"messages":["over the limit"]},`, 2000) + "{}]"
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO events (account_id, seq, type, data) VALUES ($1, 1, 'webhook.test', $2::json)`,
		account, value); err != nil {
		t.Fatal(err)
	}
	var stored, read string
	if err := s.DB().QueryRowContext(ctx, `SELECT pg_column_compression(data), data::text FROM events WHERE account_id = $1`,
		account).Scan(&stored, &read); err != nil {
		t.Fatal(err)
	}
	equal := read == value
	if stored != "lz4" || !equal {
		t.Errorf("stored with %q, read back equal %t", stored, equal)
	}
}

// TestMigrationMovesSampleWordsOutOfRows: migration 0040 fills
// job_search_sample again from jobs, so the rows its old trigger wrote
// with their words in them are rewritten with the words out of line, and
// the table still holds every sampled active job.
func TestMigrationMovesSampleWordsOutOfRows(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	if _, err := s.DB().ExecContext(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MigrateUpTo(ctx, 39); err != nil {
		t.Fatal(err)
	}
	acct := storetest.NewAccount(t, s, "A").AccountID
	jobs := jobsOfLongWords(400, "lane")
	// Written as that schema takes them: the store of today writes the
	// input digests of migration 0047.
	if err := postOldJobs(ctx, s, acct, jobs...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteJobsByReference(ctx, acct, []string{jobs[0].ReferenceNumber, jobs[1].ReferenceNumber}); err != nil {
		t.Fatal(err)
	}
	if sampled, outOfRow := sampleWordsOutOfRow(t, s); sampled == 0 || outOfRow != 0 {
		t.Fatalf("before 0040: %d jobs sampled, %d words out of their rows; want some, none", sampled, outOfRow)
	}
	if _, err := s.MigrateUpTo(ctx, 40); err != nil {
		t.Fatal(err)
	}
	sampled, outOfRow := sampleWordsOutOfRow(t, s)
	var active, same int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*), count(s.id) FILTER (WHERE s.search_words = j.search_words)
		 FROM jobs j LEFT JOIN job_search_sample s USING (id)
		 WHERE j.deleted_at IS NULL AND (hashint8extended(j.id, 11) & 15) = 0`).Scan(&active, &same); err != nil {
		t.Fatal(err)
	}
	if sampled != active || same != active || outOfRow != sampled {
		t.Errorf("after 0040: %d jobs sampled, %d words out of their rows, %d sampled active jobs, %d with their words; want all equal",
			sampled, outOfRow, active, same)
	}
}
