package store

import (
	"errors"
	"net/url"
	"strings"
)

// withSetting sets one connection setting of a lib/pq connection string,
// in URL or key=value form, over any value the string gives it.
func withSetting(dsn, key, value string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// The error would quote the URL, password and all.
			return "", errors.New("database url: not a valid URL")
		}
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	// In key=value form a later setting wins.
	return dsn + " " + key + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(value) + "'", nil
}
