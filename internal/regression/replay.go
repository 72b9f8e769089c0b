package regression

// Report is what one day's evaluation of a replayed series reported: a change of level, or the
// open regression's recovery.
type Report struct {
	// Reported is the day of the evaluation that found it (the series' last day then).
	Reported string
	// Change is the change found, nil for a recovery.
	Change *Change
	// Recovered is the first day back of the regression Of, "" for a change.
	Recovered string
	Of        *Change
}

// Replay evaluates series day by day as the service does (Evaluate after each day, on as many
// days as the watcher reads, with what earlier days recorded: the newest open regression and
// where the current level began, as the watcher reads them back from the table), and returns
// what each day reported, in order.
func Replay(source string, series []Day, t Threshold, higherIsWorse bool) []Report {
	var out []Report
	var k Known
	reads := History
	if source == SourceRUM {
		reads = RUMDays // the watcher reads real users' last 28 whole days
	}
	for i := 1; i <= len(series); i++ {
		days := series[max(0, i-reads):i]
		o := Evaluate(source, days, k, t, higherIsWorse)
		today := series[i-1].Day
		if o.Recovered != "" && k.Open != nil {
			out = append(out, Report{Reported: today, Recovered: o.Recovered, Of: k.Open})
			k.Since = max(k.Since, o.Recovered)
			k.Open = nil
		}
		if o.Change != nil {
			out = append(out, Report{Reported: today, Change: o.Change})
			k.Since = max(k.Since, o.Change.FirstBad)
			if o.Change.Worse {
				k.Open = o.Change
			}
		}
	}
	return out
}
