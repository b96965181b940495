package dataset

import (
	"bytes"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Image is one picture attached to a turn, encoded once, when drawn.
type Image struct {
	MIME          string
	Width, Height int // pixels; 0 when a file's format is not one Go decodes
	Bytes         int // the encoded image's size
	Base64        string
	File          string // the file it came from; "" for a synthetic image
}

// ImageOptions attach images to the last user turn of every item (or of a
// Fraction of them). Synthetic images are gradients seeded per item, with
// the draw's number painted into their first rows, so every draw's image
// differs in pixels, not only in bytes: a server's multimodal cache keys on
// the decoded pixels, and would otherwise short-cut all but the first.
// Repeat sends the same image on every draw of an item, to measure that
// cache on purpose.
type ImageOptions struct {
	Count int `opt:"count,positive" want:"a whole number of images above 0 (leave it out for 1)"` // images per turn; absent: 1 when images are asked for
	// Width and Height are each image's size in pixels, drawn per image
	// within the range (e.g. {min: 256, max: 1024}); 0 = 512.
	Width   Range  `opt:"width"`
	Height  Range  `opt:"height"`
	Format  string `opt:"format"`                                                                     // "jpeg" (default) or "png"
	Quality int    `opt:"quality,positive" want:"a JPEG quality from 1 to 100 (leave it out for 85)"` // JPEG quality, 1-100; absent: 85
	Repeat  bool   `opt:"repeat"`
	// Fraction of the items that get images (absent: every item), chosen by
	// item, so an item has images on every draw or on none.
	Fraction float64 `opt:"fraction,positive" want:"a number in (0, 1] (leave it out for every item)"`
	// Dir is a folder of image files to send instead of synthetic images,
	// in turn; the script binding reads it (through k6's file system) into
	// Files. Files are what they are, so they repeat as often as the draws
	// outnumber them.
	Dir string `opt:"dir"`
	// Paths name image files one by one (what `k6 archive` can carry: a
	// folder's listing is read from the local disk).
	Paths []string    `opt:"files"`
	Files []ImageFile `opt:"-"`
}

// ImageFile is an image read from a file.
type ImageFile struct {
	Name string
	Data []byte
}

// Enabled says the options ask for images.
func (o *ImageOptions) Enabled() bool {
	return o.Count != 0 || len(o.Files) > 0 || o.Dir != "" || len(o.Paths) > 0 || o.Width != (Range{}) || o.Height != (Range{}) ||
		o.Format != "" || o.Quality != 0 || o.Repeat || o.Fraction != 0
}

// maxImageSide bounds a synthetic image: larger ones are no longer a
// prompt image any server accepts, and would take gigabytes to generate.
const maxImageSide = 8192

func (o *ImageOptions) normalize() error {
	if o.Count == 0 {
		o.Count = 1
	}
	if o.Count < 0 || o.Count > 64 {
		return fmt.Errorf("images.count must be 1-64, got %d", o.Count)
	}
	for name, r := range map[string]*Range{"width": &o.Width, "height": &o.Height} {
		if r.Max == 0 && r.Min == 0 {
			*r = Range{512, 512}
		}
		if r.Min < 1 || r.Max < r.Min || r.Max > maxImageSide {
			return fmt.Errorf("images.%s must be 1-%d pixels (min <= max), got [%d, %d]", name, maxImageSide, r.Min, r.Max)
		}
	}
	switch o.Format {
	case "":
		o.Format = "jpeg"
	case "jpeg", "png":
	default:
		return fmt.Errorf("images.format %q: use \"jpeg\" or \"png\"", o.Format)
	}
	if o.Quality == 0 {
		o.Quality = 85
	}
	if o.Quality < 1 || o.Quality > 100 {
		return fmt.Errorf("images.quality must be 1-100, got %d", o.Quality)
	}
	if o.Fraction < 0 || o.Fraction > 1 {
		return fmt.Errorf("images.fraction must be between 0 and 1, got %v", o.Fraction)
	}
	if o.Dir != "" && len(o.Files) == 0 {
		return fmt.Errorf("images.dir %s: no image files read from it", o.Dir)
	}
	if len(o.Paths) > 0 && len(o.Files) == 0 {
		return fmt.Errorf("images.files %v: not read", o.Paths)
	}
	for _, f := range o.Files {
		if len(f.Data) == 0 {
			return fmt.Errorf("images: file %s is empty", f.Name)
		}
	}
	return nil
}

// withImages attaches images to d's draws when o asks for them.
func (d *Dataset) withImages(o ImageOptions, seed uint64) error {
	if !o.Enabled() {
		return nil
	}
	im, err := newImager(o, seed)
	if err != nil {
		return err
	}
	d.images = im
	return nil
}

// ImagesAttached counts the images the draws have carried so far.
func (d *Dataset) ImagesAttached() uint64 {
	if d.images == nil {
		return 0
	}
	return d.images.Attached()
}

// imager attaches images to drawn items.
type imager struct {
	o        ImageOptions
	seed     uint64
	run      uint64 // random per process: images differ across runs and instances
	draws    atomic.Uint64
	attached atomic.Uint64
	files    []Image  // encoded once
	cached   sync.Map // item index → []Image, with Repeat
}

func newImager(o ImageOptions, seed uint64) (*imager, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	var b [8]byte
	_, _ = crand.Read(b[:])
	im := &imager{o: o, seed: seed, run: binary.LittleEndian.Uint64(b[:])}
	for _, f := range o.Files {
		img, err := fileImage(f)
		if err != nil {
			return nil, err
		}
		im.files = append(im.files, img)
	}
	return im, nil
}

// fileImage sniffs a file's type and reads its size when Go can.
func fileImage(f ImageFile) (Image, error) {
	mime := sniffImage(f.Data)
	if mime == "" {
		return Image{}, fmt.Errorf("images: %s is not a PNG, JPEG, GIF or WebP image", f.Name)
	}
	img := Image{MIME: mime, Bytes: len(f.Data), Base64: base64.StdEncoding.EncodeToString(f.Data), File: f.Name}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(f.Data)); err == nil {
		img.Width, img.Height = cfg.Width, cfg.Height
	}
	return img, nil
}

func sniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// wants says whether item i gets images (Fraction, decided per item).
func (im *imager) wants(i int) bool {
	if im.o.Fraction == 0 || im.o.Fraction == 1 {
		return true
	}
	h := splitmix(im.seed ^ uint64(i)*0x9e3779b97f4a7c15) // #nosec G115 -- an index
	return float64(h>>11)/float64(1<<53) < im.o.Fraction
}

// apply returns it with its images. Encoding cannot fail for the sizes
// normalize allows (it writes to memory); were it to, the item would go
// without images rather than stop the test, and Info's image count shows it.
func (im *imager) apply(it Item) Item {
	if !im.wants(it.index) {
		return it
	}
	n := im.draws.Add(1) - 1
	if len(im.files) > 0 {
		imgs := make([]Image, im.o.Count)
		for j := range imgs {
			imgs[j] = im.files[(n*uint64(im.o.Count)+uint64(j))%uint64(len(im.files))] // #nosec G115 -- a draw count and indexes: not negative
		}
		it.Images = imgs
		im.attached.Add(uint64(len(imgs)))
		return it
	}
	if im.o.Repeat {
		if v, ok := im.cached.Load(it.index); ok {
			it.Images = v.([]Image) //nolint:forcetypeassert // only []Image is stored
			im.attached.Add(uint64(len(it.Images)))
			return it
		}
	}
	imgs := make([]Image, im.o.Count)
	for j := range imgs {
		img, err := im.synthetic(it.index, j, n)
		if err != nil {
			return it
		}
		imgs[j] = img
	}
	if im.o.Repeat {
		v, _ := im.cached.LoadOrStore(it.index, imgs)
		imgs = v.([]Image) //nolint:forcetypeassert // only []Image is stored
	}
	it.Images = imgs
	im.attached.Add(uint64(len(imgs)))
	return it
}

// Attached counts the images handed out so far.
func (im *imager) Attached() uint64 { return im.attached.Load() }

// synthetic draws image j of item i for draw n: its size and colours come
// from the item (the same on every run), the stamp from the run and the
// draw (unless Repeat).
func (im *imager) synthetic(i, j int, n uint64) (Image, error) {
	r := rand.New(rand.NewPCG(im.seed^0x696d616765, uint64(i)<<8|uint64(j))) // #nosec G115 G404 -- not crypto
	w, h := draw(r, im.o.Width), draw(r, im.o.Height)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	c0 := [3]float64{r.Float64() * 255, r.Float64() * 255, r.Float64() * 255}
	c1 := [3]float64{r.Float64() * 255, r.Float64() * 255, r.Float64() * 255}
	for y := range h {
		for x := range w {
			t := (float64(x)/float64(w) + float64(y)/float64(h)) / 2
			off := img.PixOffset(x, y)
			for k := range 3 {
				img.Pix[off+k] = uint8(c0[k] + (c1[k]-c0[k])*t)
			}
			img.Pix[off+3] = 255
		}
	}
	if !im.o.Repeat {
		stamp(img, im.run, n)
	}
	var buf bytes.Buffer
	var err error
	mime := "image/jpeg"
	if im.o.Format == "png" {
		mime = "image/png"
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: im.o.Quality})
	}
	if err != nil {
		return Image{}, fmt.Errorf("images: encoding a %dx%d %s: %w", w, h, im.o.Format, err)
	}
	return Image{MIME: mime, Width: w, Height: h, Bytes: buf.Len(), Base64: base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}

// stamp paints a mark of the run and the draw into the first rows: 16
// cells, each 8 pixels tall (JPEG's block height), coloured by a hash of
// both numbers. The first word is a bijection of the draw number within a
// run, so no two draws get the same mark, and consecutive draws differ in
// every cell by whole colour steps, which JPEG's quantization cannot fold
// into one (the draw number itself would change one cell by one grey level).
func stamp(img *image.RGBA, run, n uint64) {
	var id [16]byte
	h := splitmix(run ^ n*0x9e3779b97f4a7c15)
	binary.LittleEndian.PutUint64(id[:8], h)
	binary.LittleEndian.PutUint64(id[8:], splitmix(h^run))
	b := img.Bounds()
	cell := max(b.Dx()/len(id), 1)
	for c, v := range id {
		for y := 0; y < min(8, b.Dy()); y++ {
			for x := c * cell; x < min((c+1)*cell, b.Dx()); x++ {
				img.SetRGBA(x, y, color.RGBA{v, v ^ 0x55, v ^ 0xaa, 255})
			}
		}
	}
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
