package compare

import (
	"math"

	"github.com/openvitals/openvitals/internal/model"
)

// MaxSlots bounds an aligned filmstrip's slots: the step grows with the longer load.
const MaxSlots = 40

// steps are the filmstrip's steps to choose from (ms): the smallest that keeps the slots
// within MaxSlots.
var steps = []float64{100, 200, 250, 500, 1000, 2000, 5000, 10000}

// Filmstrip is both loads' frames on one time axis: a slot every Step ms from 0 to End (the
// later load's last frame or mark), each with what each load showed then.
type Filmstrip struct {
	Step, End              float64
	Slots                  []Slot
	BaseMarks, TargetMarks model.Marks
}

// Slot is one time of an aligned filmstrip: the frame each load showed then (its latest frame
// at or before the time; nil before its first frame), and whether it differs from the
// previous slot's.
type Slot struct {
	Time                       float64
	Base, Target               *model.Frame
	BaseChanged, TargetChanged bool
}

// AlignFilmstrips puts both loads' frames on one time axis.
func AlignFilmstrips(base, target *model.Diagnostics) Filmstrip {
	f := Filmstrip{BaseMarks: base.Marks, TargetMarks: target.Marks}
	for _, d := range []*model.Diagnostics{base, target} {
		if n := len(d.Filmstrip); n > 0 {
			f.End = max(f.End, d.Filmstrip[n-1].Time)
		}
		for _, m := range []*float64{d.Marks.FCP, d.Marks.LCP} {
			if m != nil {
				f.End = max(f.End, *m)
			}
		}
	}
	if len(base.Filmstrip) == 0 && len(target.Filmstrip) == 0 {
		return f
	}
	f.Step = steps[len(steps)-1]
	for _, s := range steps {
		if f.End/s <= MaxSlots {
			f.Step = s
			break
		}
	}
	f.End = math.Ceil(f.End/f.Step) * f.Step
	var prevBase, prevTarget *model.Frame
	for i := 0; float64(i)*f.Step <= f.End; i++ {
		t := float64(i) * f.Step
		s := Slot{Time: t, Base: shownAt(base.Filmstrip, t), Target: shownAt(target.Filmstrip, t)}
		s.BaseChanged, s.TargetChanged = i == 0 || s.Base != prevBase, i == 0 || s.Target != prevTarget
		prevBase, prevTarget = s.Base, s.Target
		f.Slots = append(f.Slots, s)
	}
	return f
}

// shownAt is the latest of frames (in time order) at or before t.
func shownAt(frames []model.Frame, t float64) *model.Frame {
	var shown *model.Frame
	for i := range frames {
		if frames[i].Time > t {
			break
		}
		shown = &frames[i]
	}
	return shown
}
