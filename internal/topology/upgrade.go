package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/internal/buildinfo"
)

// Version is what an image's jobboard version says of its build.
type Version struct {
	buildinfo.Info
	SchemaVersion int `json:"schema_version"`
}

// ImageVersion runs image's jobboard version.
func (t *Topology) ImageVersion(image string) (Version, error) {
	var v Version
	out, err := t.podman("run", "--rm", "--label", containerLabel, "--entrypoint", "/usr/local/bin/jobboard", image, "version").Output()
	if err != nil {
		return v, fmt.Errorf("%s: jobboard version: %w", image, err)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("%s: jobboard version answered %q: %w", image, out, err)
	}
	return v, nil
}

// Upgraded is what Upgrade did.
type Upgraded struct {
	From, To string
	Version  Version
	Migrated time.Duration // the new image's migrations, the old replicas serving
	Replaced []Replaced
	Took     time.Duration
}

func (u Upgraded) String() string {
	return fmt.Sprintf("%s to %s (revision %s, schema %d): migrated in %.1f s with the old replicas serving; replicas replaced: %s; every replica reports the new build; %.1f s in all",
		u.From, u.To, u.Version.Short(), u.Version.SchemaVersion, u.Migrated.Seconds(), backTimes(u.Replaced), u.Took.Seconds())
}

// Upgrade moves the replicas to image: the new build's migrations run
// first, in a container of their own, while the old replicas serve (the
// migrations add to the schema; an old replica that finds the schema ahead
// of the one it knows says so in its log and goes on serving), then the
// replicas are replaced one at a time with image, and each is checked to
// report the new build (jobboard_build_info). A rollback is the same with
// the old image, as long as no migration removed what the old build uses.
// make topology-upgrade IMAGE=... runs it.
func (t *Topology) Upgrade(ctx context.Context, image string) (Upgraded, error) {
	start := time.Now()
	u := Upgraded{From: t.ReplicaImage(), To: image}
	v, err := t.ImageVersion(image)
	if err != nil {
		return u, err
	}
	u.Version = v
	migrate := t.podman("run", "--rm", "--label", containerLabel, "--network", "host", "--env", "DATABASE_URL="+SessionURL(),
		"--entrypoint", "/usr/local/bin/jobboard", image, "migrate")
	if err := run(migrate); err != nil {
		return u, fmt.Errorf("%s: migrate: %w", image, err)
	}
	u.Migrated = time.Since(start)
	if err := t.setReplicaImage(image); err != nil {
		return u, err
	}
	if u.Replaced, err = t.ReplaceAll(ctx); err != nil {
		return u, err
	}
	for i := 1; i <= Replicas; i++ {
		if err := checkBuild(ctx, i, v); err != nil {
			return u, err
		}
	}
	u.Took = time.Since(start)
	return u, nil
}

// checkBuild checks that replica i reports build v in its metrics.
func checkBuild(ctx context.Context, i int, v Version) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ReplicaMetricsURL(i), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	want := fmt.Sprintf(`revision=%q,schema_version="%d"`, v.Short(), v.SchemaVersion)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "jobboard_build_info{") && strings.Contains(line, want) {
			return nil
		}
	}
	return fmt.Errorf("%s does not report the build %s with schema %d in jobboard_build_info", ReplicaName(i), v.Short(), v.SchemaVersion)
}
