package web

import (
	"archive/tar"
	"archive/zip"
	"cmp"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
)

// Upload limits.
const (
	MaxUpload   = 64 << 20  // bytes of a whole upload request
	maxUnpacked = 256 << 20 // bytes unpacked from archives, against zip bombs
)

// UploadQuota bounds what uploads store (issue 36, item 5): one request, one
// engine (all its versions: old versions' files are kept, as the history of
// what played, and counted) and one participant (all their engines,
// withdrawn ones included). Entries are files and directories alike.
type UploadQuota struct {
	Depth              int   // directories above an archive entry, at most
	RequestEntries     int   // entries one request may create
	EngineEntries      int64 // entries of all an engine's versions
	EngineBytes        int64
	ParticipantEntries int64 // entries of all a participant's engines
	ParticipantBytes   int64
}

// DefaultUploadQuota is the quota of a Server that sets none.
var DefaultUploadQuota = UploadQuota{Depth: 32, RequestEntries: 10000,
	EngineEntries: 20000, EngineBytes: 512 << 20, ParticipantEntries: 50000, ParticipantBytes: 1 << 30}

func (s *Server) uploadQuota() UploadQuota {
	q, d := s.UploadQuota, DefaultUploadQuota
	q.Depth = cmp.Or(q.Depth, d.Depth)
	q.RequestEntries = cmp.Or(q.RequestEntries, d.RequestEntries)
	q.EngineEntries = cmp.Or(q.EngineEntries, d.EngineEntries)
	q.EngineBytes = cmp.Or(q.EngineBytes, d.EngineBytes)
	q.ParticipantEntries = cmp.Or(q.ParticipantEntries, d.ParticipantEntries)
	q.ParticipantBytes = cmp.Or(q.ParticipantBytes, d.ParticipantBytes)
	return q
}

// maxListed is how many of an upload's files are stored for its listing.
const maxListed = 200

// unpacking is one upload request's files as they are written into dir,
// under its bounds: bytes and entries left (the least of the request's and
// the quotas' rooms, with the error each gives), and the depth of a path.
type unpacking struct {
	dir      string
	depth    int
	room     int64 // bytes left
	roomErr  *games.Error
	entries  int // entries left
	entryErr *games.Error
	made     map[string]bool // directories made, relative to dir
	files    []string        // files written, relative, in order (the first maxListed)
	nfiles   int
	nentries int
	nbytes   int64
	// seen counts archive headers, requestEntries is the request's own
	// bound on entries.
	seen, requestEntries int
}

// newUnpacking is an unpacking into dir with a request's own bounds.
func newUnpacking(dir string, depth, entries int, bytes int64) *unpacking {
	return &unpacking{dir: dir, depth: depth, made: map[string]bool{}, requestEntries: entries,
		room: bytes, roomErr: &games.Error{Code: games.ETooLarge, Message: fmt.Sprintf("file: archives unpack to more than %d MiB", bytes>>20), Field: "file"},
		entries: entries, entryErr: errInvalid("file", fmt.Sprintf("file: the upload holds more than %d files and directories (all its parts together)", entries))}
}

// quota narrows the rooms to what a quota leaves, if that is less.
func (u *unpacking) quota(whose string, usedEntries, maxEntries, usedBytes, maxBytes int64) {
	if left := max(maxEntries-usedEntries, 0); left < int64(u.entries) {
		u.entries = int(left)
		u.entryErr = &games.Error{Code: games.ETooLarge, Field: "file", Message: fmt.Sprintf("file: %s uploads would hold more than %d files and directories (%d already, old versions included)", whose, maxEntries, usedEntries)}
	}
	if left := max(maxBytes-usedBytes, 0); left < u.room {
		u.room = left
		u.roomErr = &games.Error{Code: games.ETooLarge, Field: "file", Message: fmt.Sprintf("file: %s uploads would hold more than %d MiB (%d MiB already, old versions included)", whose, maxBytes>>20, usedBytes>>20)}
	}
}

// entry counts one more file or directory.
func (u *unpacking) entry() error {
	if u.entries--; u.entries < 0 {
		return u.entryErr
	}
	u.nentries++
	return nil
}

// mkdirs makes the directory rel (slash-separated, relative) and those
// above it, counting each one made.
func (u *unpacking) mkdirs(rel string) error {
	if rel == "." || rel == "" || u.made[rel] {
		return nil
	}
	if err := u.mkdirs(path.Dir(rel)); err != nil {
		return err
	}
	if err := u.entry(); err != nil {
		return err
	}
	u.made[rel] = true
	return os.Mkdir(filepath.Join(u.dir, filepath.FromSlash(rel)), 0o755)
}

// uploadEngine registers an engine from multipart/form-data: a "meta" part with
// the JSON of POST /api/engines and one or more "file" parts (single files,
// .zip, .tar.gz/.tgz), unpacked into the engine's own directory, which becomes
// its working directory. Nothing is kept unless everything is valid. save
// stores the engine (registered or replacing one) with its files' hash and
// returns the id and status to answer with.
func (s *Server) uploadEngine(w http.ResponseWriter, r *http.Request, owner, engineID int64, fill func(*engineRequest), save engineSaver) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload)
	// One upload at a time per participant, so that their quota holds.
	if owner > 0 {
		if _, busy := s.uploading.LoadOrStore(owner, true); busy {
			w.Header().Set("Retry-After", "5")
			s.writeError(w, r, games.Errorf(games.ETooMany, "another upload of yours is under way: one at a time"))
			return
		}
		defer s.uploading.Delete(owner)
	}
	root := filepath.Join(s.DataDir, "engines")
	if err := os.MkdirAll(root, 0o755); err != nil {
		s.writeError(w, r, err)
		return
	}
	tmp, err := os.MkdirTemp(root, ".upload-")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	keep := ""
	defer func() {
		if keep == "" {
			os.RemoveAll(tmp)
		}
	}()
	q := s.uploadQuota()
	u := newUnpacking(tmp, q.Depth, q.RequestEntries, maxUnpacked)
	if err := s.applyQuota(r, u, q, owner, engineID); err != nil {
		s.writeError(w, r, err)
		return
	}
	req, err := readUpload(r, u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	files := u.nfiles
	e, err := s.admitted(r, req, fill)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if files == 0 {
		s.writeError(w, r, errInvalid("file", "file: no file in the upload"))
		return
	}
	dir := filepath.Join(root, dirName(e.Name))
	// A sandboxed engine runs as another user (nobody): its directory must
	// be readable, as its files are (writeFile's modes).
	if err := os.Chmod(tmp, 0o755); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := os.Rename(tmp, dir); err != nil {
		s.writeError(w, r, err)
		return
	}
	e.Dir = dir
	hash, err := filesHash(dir)
	if err != nil {
		os.RemoveAll(dir)
		s.writeError(w, r, err)
		return
	}
	slices.Sort(u.files)
	status, err := save(&e, storage.Upload{Hash: hash, Files: u.files, Count: u.nfiles, Entries: u.nentries, Bytes: u.nbytes})
	if err != nil {
		os.RemoveAll(dir)
		s.writeError(w, r, err)
		return
	}
	keep = dir
	s.log().Info("engine uploaded", "engine", e.Name, "id", e.ID, "dir", dir, "files", files)
	s.writeEngine(w, r, status, e.ID)
}

// engineSaver stores an engine received from a request, given what was
// uploaded with it (the zero Upload when nothing), sets its ID, and returns
// the answer's status.
type engineSaver func(e *engines.Engine, up storage.Upload) (int, error)

// applyQuota narrows an upload's rooms to what the engine's versions
// (engineID, 0 for a new engine) and its participant's engines (owner, 0 for
// the admin, who has no participant quota) leave.
func (s *Server) applyQuota(r *http.Request, u *unpacking, q UploadQuota, owner, engineID int64) error {
	if engineID > 0 {
		use, err := s.DB.EngineUploads(r.Context(), engineID)
		if err != nil {
			return err
		}
		u.quota("this engine's", use.Entries, q.EngineEntries, use.Bytes, q.EngineBytes)
	} else {
		u.quota("an engine's", 0, q.EngineEntries, 0, q.EngineBytes)
	}
	if owner > 0 {
		use, err := s.DB.ParticipantUploads(r.Context(), owner)
		if err != nil {
			return err
		}
		u.quota("your engines'", use.Entries, q.ParticipantEntries, use.Bytes, q.ParticipantBytes)
	}
	return nil
}

// filesHash is the hex SHA-256 of an engine directory's files: each regular
// file's path, mode and contents, in name order, so that the same upload
// always gives the same hash.
func filesHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", filepath.ToSlash(rel), info.Mode().Perm(), info.Size())
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// dirName is a directory name for an engine: its name made safe, and a random
// suffix so that a re-registered name never meets an old directory.
func dirName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return strings.Trim(b.String(), ".") + "-" + hex.EncodeToString(rnd[:])
}

// readUpload reads the parts of an upload, unpacking files with u.
func readUpload(r *http.Request, u *unpacking) (*engineRequest, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, errInvalid("body", "multipart: "+err.Error())
	}
	var req *engineRequest
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, uploadError(err)
		}
		switch part.FormName() {
		case "meta":
			var m engineRequest
			if err := decodeJSON(io.LimitReader(part, maxJSON), &m); err != nil {
				var e *games.Error
				if errors.As(err, &e) && e.Field == "body" {
					e.Field = "meta"
					e.Message = "meta: " + e.Message
				}
				return nil, err
			}
			req = &m
		case "file":
			if err := u.unpack(part, part.FileName()); err != nil {
				return nil, uploadError(err)
			}
		default:
			return nil, errInvalid(part.FormName(), fmt.Sprintf("unknown part %q: want meta and file", part.FormName()))
		}
		part.Close()
	}
	if req == nil {
		return nil, errInvalid("meta", `meta: missing; send the engine's JSON in a part named "meta"`)
	}
	return req, nil
}

func uploadError(err error) error {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return &games.Error{Code: games.ETooLarge, Message: fmt.Sprintf("file: the upload is over %d MiB", MaxUpload>>20), Field: "file", Key: "upload_too_large", Params: map[string]any{"max_mib": MaxUpload >> 20}}
	}
	var e *games.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errInvalid("body", "body: the upload did not arrive in time (is Content-Length longer than the body?)")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// Writing the engine's files failed. A full disk or a failing one is
		// the server's problem (the answer says so, the log has the path);
		// anything else comes of the upload itself (a file where its
		// archive wants a directory): named without the server's path.
		switch {
		case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS):
			return err
		}
		return errInvalid("file", fmt.Sprintf("file: %s %s: %v", pe.Op, filepath.Base(pe.Path), pe.Err))
	}
	return errInvalid("file", "file: "+err.Error())
}

// RemoveUploadLeftovers removes what uploads killed with the server left in
// the engines' directory (their temporary directories); serve calls it at
// start, before any upload can be under way.
func RemoveUploadLeftovers(enginesDir string) error {
	left, err := filepath.Glob(filepath.Join(enginesDir, ".upload-*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range left {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}

// unpack stores one uploaded file: archives are extracted, anything else is
// kept as a single executable file.
func (u *unpacking) unpack(r io.Reader, name string) error {
	base, err := safeName(name)
	if err != nil {
		return err
	}
	lower := strings.ToLower(base)
	switch {
	case strings.HasSuffix(lower, ".zip"):
		// zip needs random access: spool it (bounded by the request limit).
		f, err := os.CreateTemp(u.dir, ".zip-")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		size, err := io.Copy(f, r)
		if err != nil {
			return err
		}
		return u.unzip(f, size, base)
	case strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
		return u.untar(r, base)
	}
	return u.writeFile(base, r, 0o755)
}

// safeName is the base name of an uploaded file, refusing names that are not
// plain file names.
func safeName(name string) (string, error) {
	if name == "" {
		return "", errInvalid("file", "file: a file part needs a file name")
	}
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if base == "." || base == ".." || base == "/" || strings.ContainsRune(base, 0) {
		return "", errInvalid("file", fmt.Sprintf("file: %q is not a file name", name))
	}
	if windowsNames {
		if err := windowsName(base); err != nil {
			return "", errInvalid("file", "file: "+err.Error())
		}
	}
	return base, nil
}

// entryPath checks an archive entry's path and returns it clean, slash-
// separated and relative: no absolute paths, no "..", nothing outside the
// directory, no deeper than u.depth directories.
func (u *unpacking) entryPath(archive, name string) (string, error) {
	clean := path.Clean(strings.ReplaceAll(name, `\`, "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(clean, 0) || filepath.VolumeName(clean) != "" {
		return "", errInvalid("file", fmt.Sprintf("file: %s: entry %q escapes the engine's directory", archive, name))
	}
	if d := strings.Count(clean, "/"); d > u.depth {
		return "", errInvalid("file", fmt.Sprintf("file: %s: entry %.80q... is %d directories deep: at most %d", archive, name, d, u.depth))
	}
	if windowsNames && clean != "." {
		if err := windowsPath(clean); err != nil {
			return "", errInvalid("file", fmt.Sprintf("file: %s: entry %q: %v", archive, name, err))
		}
	}
	return clean, nil
}

// writeFile writes the file rel (slash-separated, relative) from r.
func (u *unpacking) writeFile(rel string, r io.Reader, mode fs.FileMode) error {
	if err := u.mkdirs(path.Dir(rel)); err != nil {
		return err
	}
	if err := u.entry(); err != nil {
		return err
	}
	dst := filepath.Join(u.dir, filepath.FromSlash(rel))
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errInvalid("file", fmt.Sprintf("file: %s is uploaded twice", rel))
		}
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, u.room+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if u.room -= n; u.room < 0 {
		return u.roomErr
	}
	u.nbytes += n
	if u.nfiles++; len(u.files) < maxListed {
		u.files = append(u.files, rel)
	}
	return nil
}

// fileMode keeps the execute bits of an archived file and nothing else.
func fileMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func (u *unpacking) unzip(f *os.File, size int64, archive string) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return errInvalid("file", fmt.Sprintf("file: %s: not a zip archive: %v", archive, err))
	}
	if len(zr.File) > u.entries {
		return u.entryErr
	}
	n := 0
	for _, zf := range zr.File {
		rel, err := u.entryPath(archive, zf.Name)
		if err != nil {
			return err
		}
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			if err := u.mkdirs(rel); err != nil {
				return err
			}
			continue
		case !mode.IsRegular():
			return errInvalid("file", fmt.Sprintf("file: %s: entry %q is a %s, only files and directories are allowed", archive, zf.Name, kind(mode)))
		}
		rc, err := zf.Open()
		if err != nil {
			return errInvalid("file", fmt.Sprintf("file: %s: %s: %v", archive, zf.Name, err))
		}
		err = u.writeFile(rel, rc, fileMode(mode))
		rc.Close()
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errInvalid("file", fmt.Sprintf("file: %s is an empty archive", archive))
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

func (u *unpacking) untar(r io.Reader, archive string) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return errInvalid("file", fmt.Sprintf("file: %s: not gzip-compressed: %v", archive, err))
	}
	tr := tar.NewReader(zr)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return errInvalid("file", fmt.Sprintf("file: %s: %v", archive, err))
		}
		// Headers that make nothing (global headers) still cost reading.
		if u.seen++; u.seen > 4*u.requestEntries {
			return u.entryErr
		}
		rel, err := u.entryPath(archive, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := u.mkdirs(rel); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := u.writeFile(rel, tr, fileMode(h.FileInfo().Mode())); err != nil {
				return err
			}
			n++
		case tar.TypeSymlink, tar.TypeLink:
			return errInvalid("file", fmt.Sprintf("file: %s: entry %q is a link, only files and directories are allowed", archive, h.Name))
		case tar.TypeXGlobalHeader:
		default:
			return errInvalid("file", fmt.Sprintf("file: %s: entry %q is a special file, only files and directories are allowed", archive, h.Name))
		}
	}
	if n == 0 {
		return errInvalid("file", fmt.Sprintf("file: %s is an empty archive", archive))
	}
	return nil
}

// listFiles lists up to max files under dir, relative to it, looking at no
// more than 10 times as many entries: the list of an engine uploaded before
// lists were stored at upload.
func listFiles(dir string, max int) []string {
	var out []string
	seen := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if seen++; err != nil || len(out) >= max || seen > 10*max {
			return filepath.SkipAll
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}
