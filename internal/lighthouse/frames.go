package lighthouse

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"slices"

	"golang.org/x/image/draw"

	"github.com/openvitals/openvitals/internal/model"
)

// FramesPath is where an audit writes the load's visual frames from the trace's screenshots,
// beside the report at reportPath (see the runner's visualFrames).
func FramesPath(reportPath string) string { return reportPath + ".frames.json" }

// FrameWidth is the widest a stored frame is, in pixels: a filmstrip shows frames side by side,
// and a frame of the viewport's width would be ten times the bytes for nothing.
const FrameWidth = 240

// frameQualities are the JPEG qualities a filmstrip's frames are stored at, best first: the
// first is a few KB a frame of a real page, the text still legible at FrameWidth; the lower
// ones are for a filmstrip over FilmstripBudget at the first (pictures that compress badly,
// such as photographs painted progressively, each pass a new frame).
var frameQualities = []int{70, 50, 35}

// FilmstripBudget is the most a load's filmstrip frames store, in bytes (a day's reports are
// some 200 to 650 KB gzipped): past it at every quality, the frames that changed the picture
// least are left out, never the first, the last, nor those that show FCP, LCP or the largest
// shift.
const FilmstripBudget = 32 << 10

// traceFrames is what the runner wrote of the trace's screenshots.
type traceFrames struct {
	SpeedIndex float64 `json:"speedIndex"`
	Frames     []struct {
		Time     float64 `json:"time"`
		Complete float64 `json:"complete"`
		JPEG     string  `json:"jpeg"`
	} `json:"frames"`
}

// stripFrame is a frame of the filmstrip being made: its picture at FrameWidth, and that
// picture encoded.
type stripFrame struct {
	time, complete float64
	picture        image.Image
	jpeg           []byte
	// keep: it stays whatever the budget (the first, the last, one showing a mark).
	keep bool
}

// traceFilmstrip makes the filmstrip of every distinct frame of the load, from navigation start
// (the first blank), each with its time and visual completeness, scaled to FrameWidth and
// stored once, within FilmstripBudget; and the load's Speed Index from those frames. It needs
// the diagnostics' marks: the frames that show them are kept whatever the budget.
func (o *Diagnosis) traceFilmstrip(raw []byte) error {
	var in traceFrames
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("lighthouse: the load's frames: %w", err)
	}
	var strip []stripFrame
	for _, f := range in.Frames {
		data, err := base64.StdEncoding.DecodeString(f.JPEG)
		if err != nil {
			return fmt.Errorf("lighthouse: a frame at %v ms: %w", f.Time, err)
		}
		picture, err := scaled(data, FrameWidth)
		if err != nil {
			return fmt.Errorf("lighthouse: a frame at %v ms: %w", f.Time, err)
		}
		small, err := encodeJPEG(picture, frameQualities[0])
		if err != nil {
			return fmt.Errorf("lighthouse: a frame at %v ms: %w", f.Time, err)
		}
		complete := round1(f.Complete)
		if n := len(strip); n > 0 && (bytes.Equal(strip[n-1].jpeg, small) || complete == 0) {
			// The same picture as the frame before, or another blank one (none of the final
			// page's colours yet: a white page, a scrollbar drawn): nothing a person would see.
			continue
		}
		strip = append(strip, stripFrame{time: round1(f.Time), complete: complete, picture: picture, jpeg: small})
	}
	strip, err := withinBudget(strip, o.Diagnostics.Marks)
	if err != nil {
		return err
	}
	for _, f := range strip {
		complete := f.complete
		o.Diagnostics.Filmstrip = append(o.Diagnostics.Filmstrip, model.Frame{Time: f.time, Complete: &complete, Image: o.addImageData(f.jpeg, "image/jpeg", ".jpg")})
	}
	if len(in.Frames) > 0 && in.SpeedIndex > 0 {
		si := round1(in.SpeedIndex)
		o.Diagnostics.SpeedIndex = &si
	}
	return nil
}

// markTolerance is how long before a mark (FCP, LCP, the largest shift) the frame that shows
// it may be timed: a screenshot's time may come a few ms before the paint's.
const markTolerance = 10

// withinBudget fits a filmstrip into FilmstripBudget: at a lower quality, then without the
// frames whose completeness moved least since the frame before, keeping the first, the last
// and the frame that shows each of marks' FCP, LCP and largest shift.
func withinBudget(strip []stripFrame, marks model.Marks) ([]stripFrame, error) {
	size := func() int {
		n := 0
		for _, f := range strip {
			n += len(f.jpeg)
		}
		return n
	}
	for _, q := range frameQualities[1:] {
		if size() <= FilmstripBudget {
			return strip, nil
		}
		for i := range strip {
			b, err := encodeJPEG(strip[i].picture, q)
			if err != nil {
				return nil, fmt.Errorf("lighthouse: a frame at %v ms: %w", strip[i].time, err)
			}
			strip[i].jpeg = b
		}
	}
	if len(strip) == 0 {
		return strip, nil
	}
	strip[0].keep, strip[len(strip)-1].keep = true, true
	for _, m := range []*float64{marks.FCP, marks.LCP, marks.LargestShift} {
		if m == nil {
			continue
		}
		// A screenshot's time may come a few ms before the paint's (the frame at 179.9 ms
		// shows the LCP at 181): the frame that shows a mark is the first from markTolerance
		// before it; the one the dashboard marks, the last until markTolerance after it.
		if i := slices.IndexFunc(strip, func(f stripFrame) bool { return f.time >= *m-markTolerance }); i >= 0 {
			strip[i].keep = true
		}
		if i := lastIndex(strip, func(f stripFrame) bool { return f.time <= *m+markTolerance }); i >= 0 {
			strip[i].keep = true
		}
	}
	for size() > FilmstripBudget {
		least := -1
		for i := 1; i < len(strip); i++ {
			if strip[i].keep {
				continue
			}
			if least < 0 || math.Abs(strip[i].complete-strip[i-1].complete) < math.Abs(strip[least].complete-strip[least-1].complete) {
				least = i
			}
		}
		if least < 0 {
			break // the frames that must stay are over the budget: they stay
		}
		strip = slices.Delete(strip, least, least+1)
	}
	return strip, nil
}

// lastIndex is the index of the last frame of strip for which ok holds, -1 for none.
func lastIndex(strip []stripFrame, ok func(stripFrame) bool) int {
	for i := len(strip) - 1; i >= 0; i-- {
		if ok(strip[i]) {
			return i
		}
	}
	return -1
}

// scaled is a JPEG image no wider than width.
func scaled(data []byte, width int) (image.Image, error) {
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	if b.Dx() <= width {
		return src, nil
	}
	h := max(1, b.Dy()*width/b.Dx())
	dst := image.NewRGBA(image.Rect(0, 0, width, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst, nil
}

// encodeJPEG encodes a picture at quality.
func encodeJPEG(picture image.Image, quality int) ([]byte, error) {
	var out bytes.Buffer
	if err := jpeg.Encode(&out, picture, &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// imageName names an image by its content.
func imageName(data []byte, ext string) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]) + ext
}

// addImageData stores an image once, named by its content, and returns its name.
func (o *Diagnosis) addImageData(data []byte, contentType, ext string) string {
	name := imageName(data, ext)
	if !slices.ContainsFunc(o.Images, func(i model.Image) bool { return i.Name == name }) {
		o.Images = append(o.Images, model.Image{Name: name, ContentType: contentType, Data: data})
	}
	return name
}
