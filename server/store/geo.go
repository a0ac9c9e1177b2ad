package store

import (
	"bytes"
	"context"
	"database/sql"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// zipCentroidsCSV is built by scripts/build-zip-centroids.sh: zip,latitude,longitude.
//
//go:embed geo/zip_centroids.csv
var zipCentroidsCSV []byte

// loadZipCentroids fills zip_centroids from the embedded CSV when it is empty.
func loadZipCentroids(ctx context.Context, db sqlx.ExtContext) error {
	var n int
	if err := sqlx.GetContext(ctx, db, &n, `SELECT count(*) FROM zip_centroids`); err != nil {
		return fmt.Errorf("count zip centroids: %w", err)
	}
	if n > 0 {
		return nil
	}
	rows, err := csv.NewReader(bytes.NewReader(zipCentroidsCSV)).ReadAll()
	if err != nil {
		return fmt.Errorf("read zip centroids: %w", err)
	}
	var zips []string
	var lats, lons []float64
	for _, r := range rows[1:] {
		lat, err1 := strconv.ParseFloat(r[1], 64)
		lon, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("zip centroids: bad row %q", r)
		}
		zips, lats, lons = append(zips, r[0]), append(lats, lat), append(lons, lon)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO zip_centroids (zip, latitude, longitude)
		SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[]) ON CONFLICT DO NOTHING`,
		pq.StringArray(zips), pq.Float64Array(lats), pq.Float64Array(lons))
	if err != nil {
		return fmt.Errorf("load zip centroids: %w", err)
	}
	return nil
}

// ZipCentroid returns the centroid of a five-digit ZIP, or ErrNotFound.
// The drivers list's radius filter asks, so the read database answers, as
// it does the list. The table never changes once loaded, so a ZIP found is
// kept in memory (at most the table's 41,000 or so rows) and the radius
// filter's later lists skip that round trip; one not found is asked again.
func (s *Store) ZipCentroid(ctx context.Context, zip string) (lat, lon float64, err error) {
	if c, ok := s.zips.Load(zip); ok {
		c := c.(centroid)
		return c.Lat, c.Lon, nil
	}
	var c centroid
	err = s.read(ctx, func(db *sqlx.DB) error {
		return db.GetContext(ctx, &c, `SELECT latitude, longitude FROM zip_centroids WHERE zip = $1`, zip)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, ErrNotFound
	}
	if err != nil {
		return 0, 0, fmt.Errorf("zip centroid %q: %w", zip, err)
	}
	s.zips.Store(zip, c)
	return c.Lat, c.Lon, nil
}

type centroid struct {
	Lat float64 `db:"latitude"`
	Lon float64 `db:"longitude"`
}
