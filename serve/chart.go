package serve

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
)

// weekStart is the Monday, 00:00 UTC, of t's week.
func weekStart(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
}

// chart draws uses and views per week, n weeks from start, as an inline
// SVG bar chart: two bars a week, the uses dark and the views light, with
// the week's date and counts in each bar's title.
func chart(days []Day, start time.Time, n int) template.HTML {
	uses, views := make([]int, n), make([]int, n)
	for _, d := range days {
		if d.Date.Before(start) {
			continue
		}
		i := int(d.Date.Sub(start).Hours() / (24 * 7))
		if i >= n {
			continue
		}
		uses[i] += d.Uses
		views[i] += d.Views
	}
	top := 1
	for i := range n {
		top = max(top, uses[i], views[i])
	}
	const width, height, pad, bar = 480, 120, 20, 14
	step := (width - 2*pad) / n
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`, width, height+30, width, height+30)
	fmt.Fprintf(&b, `<title>uses and views per week over %d weeks</title>`, n)
	for i := range n {
		week := start.AddDate(0, 0, 7*i)
		x := pad + i*step
		for j, v := range []int{uses[i], views[i]} {
			h := v * (height - 10) / top
			kind := [2]string{"uses", "views"}[j]
			fmt.Fprintf(&b, `<rect class="%s" x="%d" y="%d" width="%d" height="%d"><title>week of %s: %d %s</title></rect>`,
				kind, x+j*bar, height-h, bar, h, week.Format("2 Jan"), v, kind)
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, x, height+16, week.Format("2 Jan"))
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/></svg>`, pad, height, width-pad, height)
	return template.HTML(b.String())
}

// DaysOf turns a copy's day buckets from since on into Days, oldest first.
func DaysOf(u *curator.SkillUsage, since time.Time) []Day {
	if u == nil {
		return nil
	}
	from := since.UTC().Format(curator.DayLayout)
	var out []Day
	for key, c := range u.Days {
		day, err := time.Parse(curator.DayLayout, key)
		if err != nil || key < from {
			continue
		}
		out = append(out, Day{Date: day, Uses: c.Uses, Views: c.Views})
	}
	slices.SortFunc(out, func(a, b Day) int { return a.Date.Compare(b.Date) })
	return out
}
