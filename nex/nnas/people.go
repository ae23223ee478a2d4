package nnas

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gamewire/gamewire/nex/credentials"
)

// nintendoTime is how NNAS writes times ("2013-07-08 18:42:07", which
// NintendoClients reads with datetime.fromisoformat).
const nintendoTime = "2006-01-02 15:04:05"

type accountXML struct {
	Domain   string `xml:"domain"`
	Type     string `xml:"type"`
	Username string `xml:"username"`
}

type emailXML struct {
	Address       string `xml:"address"`
	ID            uint64 `xml:"id"`
	Parent        string `xml:"parent"`
	Primary       string `xml:"primary"`
	Reachable     string `xml:"reachable"`
	Type          string `xml:"type"`
	UpdatedBy     string `xml:"updated_by"`
	Validated     string `xml:"validated"`
	ValidatedDate string `xml:"validated_date"`
}

type profileMiiXML struct {
	Status    string    `xml:"status"`
	Data      string    `xml:"data"`
	ID        uint64    `xml:"id"`
	MiiHash   string    `xml:"mii_hash"`
	MiiImages miiImages `xml:"mii_images"`
	Name      string    `xml:"name"`
	Primary   string    `xml:"primary"`
}

// personXML is people/@me/profile's answer; its element names are those
// nintendo-wiki "NNID Server" lists and NintendoClients' Profile reads.
type personXML struct {
	XMLName          xml.Name      `xml:"person"`
	Accounts         []accountXML  `xml:"accounts>account"`
	ActiveFlag       string        `xml:"active_flag"`
	BirthDate        string        `xml:"birth_date"`
	Country          string        `xml:"country"`
	CreateDate       string        `xml:"create_date"`
	DeviceAttributes struct{}      `xml:"device_attributes"`
	Gender           string        `xml:"gender"`
	Language         string        `xml:"language"`
	Updated          string        `xml:"updated"`
	MarketingFlag    string        `xml:"marketing_flag"`
	OffDeviceFlag    string        `xml:"off_device_flag"`
	PID              uint64        `xml:"pid"`
	Email            emailXML      `xml:"email"`
	Mii              profileMiiXML `xml:"mii"`
	Region           int           `xml:"region"`
	TZName           string        `xml:"tz_name"`
	UserID           string        `xml:"user_id"`
	UTCOffset        int           `xml:"utc_offset"`
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request, n credentials.NNID) {
	created := n.Created.UTC().Format(nintendoTime)
	p := personXML{
		Accounts:   []accountXML{{Domain: "ESHOP.NINTENDO.NET", Type: "INTERNAL", Username: strconv.FormatUint(uint64(n.PID), 10)}},
		ActiveFlag: "Y", BirthDate: orDefault(n.BirthDate, "2000-01-01"), Country: n.Country, CreateDate: created,
		Gender: orDefault(n.Gender, "M"), Language: orDefault(n.Language, "en"), Updated: n.Updated.UTC().Format(nintendoTime),
		MarketingFlag: "N", OffDeviceFlag: "Y", PID: uint64(n.PID),
		Email: emailXML{Address: n.Email, ID: uint64(n.PID), Parent: "N", Primary: "Y", Reachable: "Y", Type: "DEFAULT",
			UpdatedBy: "USER", Validated: "Y", ValidatedDate: created},
		Mii: profileMiiXML{Status: "COMPLETED", Data: base64.StdEncoding.EncodeToString(n.MiiData), ID: uint64(n.PID),
			Name: n.MiiName, Primary: "Y"},
		Region: n.Region, TZName: orDefault(n.TZName, "UTC"), UserID: n.UserID,
	}
	if loc, err := time.LoadLocation(p.TZName); err == nil {
		_, off := s.now().In(loc).Zone()
		p.UTCOffset = off
	}
	s.reply(w, p)
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// Person is the part of a POST people body gamewire reads: the NNID, its
// password (the console sends it in the clear over TLS), and the profile.
type Person struct {
	XMLName   xml.Name `xml:"person"`
	UserID    string   `xml:"user_id"`
	Password  string   `xml:"password"`
	BirthDate string   `xml:"birth_date"`
	Country   string   `xml:"country"`
	Language  string   `xml:"language"`
	Gender    string   `xml:"gender"`
	Region    int      `xml:"region"`
	TZName    string   `xml:"tz_name"`
	Email     struct {
		Address string `xml:"address"`
	} `xml:"email"`
	Mii struct {
		Name string `xml:"name"`
		Data string `xml:"data"`
	} `xml:"mii"`
}

// ParsePerson reads a POST people body (at most MaxXMLBody bytes) and checks
// the fields an account needs.
func ParsePerson(b []byte) (Person, error) {
	var p Person
	if len(b) > MaxXMLBody {
		return p, fmt.Errorf("nnas: person of %d bytes, at most %d", len(b), MaxXMLBody)
	}
	if err := xml.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("nnas: person: %w", err)
	}
	if err := credentials.CheckUserID(p.UserID); err != nil {
		return p, err
	}
	if len(p.Password) < 6 || len(p.Password) > 256 {
		return p, errors.New("nnas: person: password of 6 to 256 characters needed")
	}
	if p.BirthDate != "" {
		if _, err := time.Parse("2006-01-02", p.BirthDate); err != nil {
			return p, fmt.Errorf("nnas: person: birth_date %q", p.BirthDate)
		}
	}
	if len(p.Country) > 2 || len(p.Language) > 8 || len(p.Gender) > 1 || len(p.TZName) > 64 || len(p.Email.Address) > 256 || len(p.Mii.Name) > 40 {
		return p, errors.New("nnas: person: a field is too long")
	}
	if _, err := base64.StdEncoding.DecodeString(p.Mii.Data); err != nil {
		return p, fmt.Errorf("nnas: person: mii data: %w", err)
	}
	return p, nil
}

func (s *Server) createPerson(w http.ResponseWriter, r *http.Request) {
	if !s.client(r) {
		s.fail(w, r, http.StatusBadRequest, errBadClient, nil)
		return
	}
	if !s.AllowRegistration {
		s.fail(w, r, http.StatusForbidden, errForbidden, errors.New("account creation is off (serve --self-register)"))
		return
	}
	body, err := readBody(r, MaxXMLBody)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, errBadFormat, err)
		return
	}
	p, err := ParsePerson(body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, errBadFormat, err)
		return
	}
	mii, _ := base64.StdEncoding.DecodeString(p.Mii.Data)
	// The verifier covers the hash of PID and password, and the PID is the
	// store's choice: create with an unusable verifier, then set the real one.
	none := credentials.Verifier{}
	n, err := s.Store.CreateNNID(r.Context(), credentials.NNID{UserID: p.UserID, Email: p.Email.Address, BirthDate: p.BirthDate,
		Country: p.Country, Region: p.Region, Gender: p.Gender, Language: p.Language, TZName: p.TZName,
		MiiName: p.Mii.Name, MiiData: mii}, none)
	if errors.Is(err, credentials.ErrNNIDExists) {
		s.fail(w, r, http.StatusBadRequest, errExists, err)
		return
	} else if err != nil {
		s.fail(w, r, http.StatusInternalServerError, errInternal, err)
		return
	}
	v, err := credentials.NewVerifier(credentials.PasswordHash(n.PID, p.Password))
	if err == nil {
		err = s.Store.SetNNIDPassword(r.Context(), n.PID, v)
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, errInternal, err)
		return
	}
	if s.Logger != nil {
		s.Logger.InfoContext(r.Context(), "nnas account created", "nnid", n.UserID, "pid", uint64(n.PID), "from", r.RemoteAddr)
	}
	s.reply(w, struct {
		XMLName xml.Name `xml:"person"`
		PID     uint64   `xml:"pid"`
	}{PID: uint64(n.PID)})
}
