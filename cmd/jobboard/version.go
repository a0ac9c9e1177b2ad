package main

import (
	"encoding/json"
	"io"

	"github.com/truckjobs/jobboard/internal/buildinfo"
	"github.com/truckjobs/jobboard/server/store"
)

// versionInfo is what jobboard version prints: the build, and the
// database schema version this build migrates to and serves. An upgrade
// compares the schema version of the new build with the database's
// (schema_migrations) before it replaces any replica.
type versionInfo struct {
	buildinfo.Info
	SchemaVersion int `json:"schema_version"`
}

// versionCommand prints the build and the schema version as one JSON line.
func versionCommand(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usageError{"version takes no arguments"}
	}
	return json.NewEncoder(stdout).Encode(versionInfo{Info: buildinfo.Read(), SchemaVersion: store.LatestVersion()})
}
