package skillsync

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/daemon"
)

// unitFile parses a systemd unit: section -> key -> values.
func unitFile(t *testing.T, name string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a key=value line in a section: %q", name, n, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// runsSkillsync checks that a command line runs a real skillsync command.
func runsSkillsync(t *testing.T, where, cmd string, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if !strings.Contains(cmd, "skillsync "+c) {
			t.Errorf("%s: %q does not run skillsync %s", where, cmd, c)
		}
	}
}

func TestDocsSystemd(t *testing.T) {
	t.Parallel()
	svc := unitFile(t, "docs/systemd/skillsync.service")
	runsSkillsync(t, "skillsync.service", strings.Join(svc["Service"]["ExecStart"], " "), "sync")
	if svc["Service"]["Type"][0] != "oneshot" || svc["Service"]["SuccessExitStatus"][0] != "3" {
		t.Errorf("service = %v", svc["Service"])
	}
	timer := unitFile(t, "docs/systemd/skillsync.timer")
	if len(timer["Timer"]["OnUnitActiveSec"]) != 1 || timer["Install"]["WantedBy"][0] != "timers.target" {
		t.Errorf("timer = %v", timer)
	}
	d := unitFile(t, "docs/systemd/skillsync-daemon.service")
	runsSkillsync(t, "skillsync-daemon.service", d["Service"]["ExecStart"][0], "daemon --listen 127.0.0.1:9464")
	// Started means ready: the unit asks /readyz where the daemon listens.
	if post := d["Service"]["ExecStartPost"]; len(post) != 1 || !strings.Contains(post[0], "http://127.0.0.1:9464/readyz") {
		t.Errorf("skillsync-daemon.service does not check readiness after start: %v", post)
	}
}

// TestDocsKubernetesDaemon: the daemon's Deployment probes /healthz and
// /readyz on the port it serves, and Prometheus is told to scrape it.
func TestDocsKubernetesDaemon(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("docs/kubernetes/daemon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		HTTPGet struct {
			Path string
			Port string
		} `yaml:"httpGet"`
	}
	var dep struct {
		Kind string
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string
				}
				Spec struct {
					Containers []struct {
						Command []string
						Ports   []struct {
							Name          string
							ContainerPort int `yaml:"containerPort"`
						}
						Liveness  probe `yaml:"livenessProbe"`
						Readiness probe `yaml:"readinessProbe"`
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &dep); err != nil {
		t.Fatal(err)
	}
	cs := dep.Spec.Template.Spec.Containers
	if dep.Kind != "Deployment" || len(cs) != 1 || len(cs[0].Ports) != 1 {
		t.Fatalf("deployment = %+v", dep)
	}
	c := cs[0]
	runsSkillsync(t, "daemon.yaml", strings.Join(c.Command, " "), "daemon --listen 0.0.0.0:9464")
	if c.Ports[0].ContainerPort != 9464 || c.Liveness.HTTPGet.Path != "/healthz" || c.Readiness.HTTPGet.Path != "/readyz" ||
		c.Liveness.HTTPGet.Port != c.Ports[0].Name || c.Readiness.HTTPGet.Port != c.Ports[0].Name {
		t.Errorf("probes = %+v %+v, ports %+v", c.Liveness, c.Readiness, c.Ports)
	}
	a := dep.Spec.Template.Metadata.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9464" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations = %v", a)
	}
}

func TestDocsKubernetesCronJob(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("docs/kubernetes/cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string
		Spec       struct {
			Schedule          string
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Command []string
							}
						}
					}
				}
			} `yaml:"jobTemplate"`
		}
	}
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	if job.Kind != "CronJob" || job.APIVersion != "batch/v1" || job.Spec.ConcurrencyPolicy != "Forbid" {
		t.Errorf("cronjob = %+v", job)
	}
	if err := daemon.ParseSchedule("schedule", job.Spec.Schedule); err != nil {
		t.Error(err)
	}
	containers := job.Spec.JobTemplate.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("containers = %+v", containers)
	}
	runsSkillsync(t, "cronjob.yaml", strings.Join(containers[0].Command, " "), "sync")
}

func TestDocsCrontab(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("docs/crontab")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines++
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("crontab line %q has no command", line)
		}
		if err := daemon.ParseSchedule("crontab", strings.Join(f[:5], " ")); err != nil {
			t.Error(err)
		}
		runsSkillsync(t, "crontab", strings.Join(f[5:], " "), "sync", "curate")
	}
	if lines != 1 {
		t.Errorf("crontab has %d entries, want 1", lines)
	}
}

// TestReadmeLinksResolve checks that every relative link of the README
// and of the pages under docs/ names a file that exists, and that the
// README keeps what a newcomer needs near its top.
func TestReadmeLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, page := range append(pages, "README.md") {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
			}
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	if len(lines) > 300 {
		t.Errorf("README.md has %d lines; keep it under 300 and move reference text to docs/", len(lines))
	}
	table := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| command | what it does |") })
	if table < 0 || table > 120 {
		t.Errorf("the everyday commands table is at line %d of README.md; keep it within the first 120", table+1)
	}
}

// TestArchitectureNamesRealPackages checks that every package the
// architecture page names in its table is a folder of the module.
func TestArchitectureNamesRealPackages(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 200 {
		t.Errorf("ARCHITECTURE.md has %d lines; keep it under 200", n)
	}
	cell := regexp.MustCompile("^\\| (`[a-z/]+/`(?:, `[a-z/]+/`)*) \\|")
	named := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := cell.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range strings.Split(m[1], ", ") {
			dir := strings.Trim(p, "`/")
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				t.Errorf("ARCHITECTURE.md names package %s, which is not a folder", dir)
			}
			named++
		}
	}
	if named < 20 {
		t.Errorf("found %d packages in ARCHITECTURE.md's table, want the whole tree", named)
	}
}
