package skillsync

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readPlist parses an XML property list: its one top-level value, as
// map[string]any (dict), []any (array), string, int64, float64 or bool.
// Anything a property list may not hold (a key without a value, an
// unknown element, text outside a string) is an error.
func readPlist(r io.Reader) (any, error) {
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("no <plist>: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				return nil, fmt.Errorf("top element <%s>, want <plist>", se.Name.Local)
			}
			break
		}
	}
	v, end, err := plistValue(d)
	if err != nil {
		return nil, err
	}
	if end {
		return nil, errors.New("<plist> holds no value")
	}
	if _, end, err := plistValue(d); err != nil || !end {
		return nil, fmt.Errorf("<plist> holds more than one value (%v)", err)
	}
	return v, nil
}

// plistValue reads the next value; end reports the end of the enclosing
// element instead.
func plistValue(d *xml.Decoder) (v any, end bool, err error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, false, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil, true, nil
		case xml.CharData:
			if strings.TrimSpace(string(t)) != "" {
				return nil, false, fmt.Errorf("text %q outside a value", strings.TrimSpace(string(t)))
			}
		case xml.StartElement:
			v, err := plistElement(d, t.Name.Local)
			return v, false, err
		}
	}
}

func plistElement(d *xml.Decoder, name string) (any, error) {
	switch name {
	case "dict":
		m := map[string]any{}
		for {
			k, end, err := plistValue(d)
			if err != nil {
				return nil, err
			}
			if end {
				return m, nil
			}
			key, ok := k.(plistKey)
			if !ok {
				return nil, fmt.Errorf("dict holds %v where a <key> belongs", k)
			}
			v, end, err := plistValue(d)
			if err != nil {
				return nil, err
			}
			if end {
				return nil, fmt.Errorf("key %q has no value", key)
			}
			if _, ok := v.(plistKey); ok {
				return nil, fmt.Errorf("key %q is followed by another key", key)
			}
			if _, dup := m[string(key)]; dup {
				return nil, fmt.Errorf("key %q twice", key)
			}
			m[string(key)] = v
		}
	case "array":
		var a []any
		for {
			v, end, err := plistValue(d)
			if err != nil {
				return nil, err
			}
			if end {
				return a, nil
			}
			a = append(a, v)
		}
	case "true", "false":
		if err := d.Skip(); err != nil {
			return nil, err
		}
		return name == "true", nil
	case "key", "string", "integer", "real", "date", "data":
		var s string
		if err := d.DecodeElement(&s, &xml.StartElement{Name: xml.Name{Local: name}}); err != nil {
			return nil, err
		}
		switch name {
		case "key":
			return plistKey(s), nil
		case "integer":
			return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		case "real":
			return strconv.ParseFloat(strings.TrimSpace(s), 64)
		}
		return s, nil
	}
	return nil, fmt.Errorf("<%s> is not a property list element", name)
}

type plistKey string

func TestPlistReader(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`<plist><dict><key>a</key></dict></plist>`,
		`<plist><dict><string>a</string><string>b</string></dict></plist>`,
		`<plist><dict><key>a</key><key>b</key></dict></plist>`,
		`<plist><dict><key>a</key><integer>x</integer></dict></plist>`,
		`<plist><dict><key>a</key><blob/></dict></plist>`,
		`<plist><dict/><dict/></plist>`,
		`<plist><dict><key>a</key><string>b</string>`,
		`<notplist/>`,
	} {
		if _, err := readPlist(strings.NewReader(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	v, err := readPlist(strings.NewReader(`<plist version="1.0"><dict><key>a</key><array><string>x</string><integer>2</integer><true/></array></dict></plist>`))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(v); got != "map[a:[x 2 true]]" {
		t.Errorf("parsed %s", got)
	}
}

func TestDocsLaunchdAgent(t *testing.T) {
	t.Parallel()
	f, err := os.Open("docs/launchd/com.skillsync.daemon.plist")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := readPlist(f)
	if err != nil {
		t.Fatalf("the launchd agent is not a property list: %v", err)
	}
	agent, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("top value %T, want a dict", v)
	}
	if agent["Label"] != "com.skillsync.daemon" || agent["RunAtLoad"] != true {
		t.Errorf("agent = %v", agent)
	}
	args, _ := agent["ProgramArguments"].([]any)
	var words []string
	for _, a := range args {
		s, ok := a.(string)
		if !ok {
			t.Fatalf("ProgramArguments holds %v", a)
		}
		words = append(words, s)
	}
	runsSkillsync(t, "launchd agent", strings.Join(words, " "), "daemon")
	for _, k := range []string{"WorkingDirectory", "StandardOutPath", "StandardErrorPath"} {
		// launchd expands neither ~ nor variables: paths must be absolute.
		if s, _ := agent[k].(string); !strings.HasPrefix(s, "/") {
			t.Errorf("%s = %q, want an absolute path", k, s)
		}
	}
	env, _ := agent["EnvironmentVariables"].(map[string]any)
	if s, _ := env["SKILLSYNC_CONFIG"].(string); !strings.HasSuffix(s, "/skillsync.yaml") {
		t.Errorf("SKILLSYNC_CONFIG = %v", env["SKILLSYNC_CONFIG"])
	}
}

func TestDocsWindowsTask(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("docs/windows/skillsync-task.xml")
	if err != nil {
		t.Fatal(err)
	}
	var task struct {
		XMLName  xml.Name
		Version  string `xml:"version,attr"`
		Triggers struct {
			Logon []struct {
				Interval string `xml:"Repetition>Interval"`
			} `xml:"LogonTrigger"`
		}
		Settings struct {
			MultipleInstancesPolicy string
			ExecutionTimeLimit      string
		}
		Actions struct {
			Exec []struct {
				Command, Arguments, WorkingDirectory string
			}
		}
	}
	if err := xml.Unmarshal(data, &task); err != nil {
		t.Fatalf("the task is not XML: %v", err)
	}
	if task.XMLName.Space != "http://schemas.microsoft.com/windows/2004/02/mit/task" || task.XMLName.Local != "Task" || task.Version == "" {
		t.Errorf("root element %v version %q, want a Task Scheduler task", task.XMLName, task.Version)
	}
	if len(task.Triggers.Logon) != 1 || task.Triggers.Logon[0].Interval != "PT15M" {
		t.Errorf("triggers = %+v", task.Triggers)
	}
	if task.Settings.MultipleInstancesPolicy != "IgnoreNew" || task.Settings.ExecutionTimeLimit == "" {
		t.Errorf("settings = %+v", task.Settings)
	}
	if len(task.Actions.Exec) != 2 {
		t.Fatalf("actions = %+v", task.Actions)
	}
	for i, want := range []string{"sync", "curate"} {
		e := task.Actions.Exec[i]
		if !strings.HasSuffix(e.Command, `\skillsync.exe`) {
			t.Errorf("action %d runs %q", i, e.Command)
		}
		runsSkillsync(t, "task action", "skillsync "+e.Arguments, want)
	}
}
