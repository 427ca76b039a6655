BEGIN TRANSACTION;
CREATE TABLE aggregates (
	aggregate VARCHAR NOT NULL, 
	version INTEGER NOT NULL, 
	state TEXT NOT NULL, 
	hash VARCHAR NOT NULL, 
	PRIMARY KEY (aggregate)
);
INSERT INTO "aggregates" VALUES('discovery/schedule',5,'{"accounts":[{"account":"claude","record":{"overage":false,"recordedAt":"2026-12-06T12:00:00.000Z","recordedBy":"owner","sequence":1,"signIn":"owner@example.com"},"version":2},{"account":"chatgpt"}],"commission":{"effectiveFrom":"2026-12-07","lanes":[{"closes":"05:00","deadlineMinutes":45,"lane":"alpha/basic","product":"alpha","rhythm":"basic","tasks":[{"account":"claude","callBound":150000,"maxCalls":4,"task":"scan"}],"time":"02:00"},{"closes":"05:00","deadlineMinutes":45,"lane":"bravo/basic","product":"bravo","rhythm":"basic","tasks":[{"account":"claude","callBound":150000,"maxCalls":4,"task":"scan"}],"time":"02:10"},{"closes":"05:00","deadlineMinutes":120,"lane":"alpha/full","product":"alpha","rhythm":"full","tasks":[{"account":"claude","callBound":150000,"maxCalls":4,"task":"scan"}],"time":"02:40","weekday":1}],"protocol":"sf-schedule-commission/1","recordMaxAgeDays":30,"revision":1,"weeklyTokens":40000000,"zone":"Europe/London"},"commissionDigest":"5d8206118f05d07ffd900bc88cfcad75419dae4e86ab0aaa1faca194dd820cfb","lanes":[{"lane":"alpha/basic","open":{"admittedAt":"2026-12-07T02:00:00.000Z","calls":[{"account":"claude","admittedAt":"2026-12-07T02:00:00.000Z","attempt":1,"bound":150000,"debit":900,"endedAt":"2026-12-07T02:00:00.000Z","k":1,"outcome":"ok","segment":1,"task":"scan","tokens":900,"week":"2026-W50","work":"w1"}],"date":"2026-12-07","id":"discovery/alpha/basic/2026-12-07","key":"2026-12-07","lane":"alpha/basic","segments":[{"deadline":"2026-12-07T02:45:00.000Z","kind":"admit","n":1,"night":"2026-12-07","runner":"r1","startedAt":"2026-12-07T02:00:00.000Z"}],"slot":"2026-12-07T02:00:00.000Z","state":"running","transitions":{"admit":3,"call/1":4,"call/1/end":5}},"since":"2026-12-06T12:00:00.000Z","watermark":{"date":"2026-12-07","occurrence":"discovery/alpha/basic/2026-12-07"}},{"lane":"alpha/full","since":"2026-12-06T12:00:00.000Z"},{"lane":"bravo/basic","since":"2026-12-06T12:00:00.000Z"}],"ledger":[{"ceiling":40000000,"debited":900,"week":"2026-W50"}],"protocol":"sf-lifecycle-schedule/1","revisionRecordedAt":"2026-12-06T12:00:00.000Z"}','e0a221bc9ceb08856afbe010ba381be26d888dd8a2c87ec9470f0646af23929b');
CREATE TABLE events (
	id INTEGER NOT NULL, 
	aggregate VARCHAR NOT NULL, 
	version INTEGER NOT NULL, 
	command_id VARCHAR NOT NULL, 
	type VARCHAR NOT NULL, 
	data TEXT NOT NULL, 
	prev_hash VARCHAR NOT NULL, 
	hash VARCHAR NOT NULL, 
	state_sha256 TEXT, 
	receipt_sha256 TEXT, 
	PRIMARY KEY (id), 
	CONSTRAINT events_aggregate_version UNIQUE (aggregate, version)
);
INSERT INTO "events" VALUES(1,'discovery/schedule',1,'discovery/commission/1','commission-recorded','{"at":"2026-12-06T12:00:00.000Z","digest":"5d8206118f05d07ffd900bc88cfcad75419dae4e86ab0aaa1faca194dd820cfb","revision":1}','0000000000000000000000000000000000000000000000000000000000000000','679677c07801a8d2876cd530a63dc26604cbf36dcb42f214afe867e0c28183da','23186f7d8d088262e129014af30081b4f0c446a5f426f1db64e1866a274eac3d','fac15d2b31c363681de1d3e9275dea233f6ff0f8f174525cdaef669e3d51c2fb');
INSERT INTO "events" VALUES(2,'discovery/schedule',2,'discovery/account/claude/1','account-recorded','{"account":"claude","at":"2026-12-06T12:00:00.000Z","overage":false,"recordedBy":"owner","sequence":1,"signIn":"owner@example.com"}','679677c07801a8d2876cd530a63dc26604cbf36dcb42f214afe867e0c28183da','d51a4483ea96bbb1891345fae2029dbd06785dcf862eb8c8458806b58af70bb7','5d4b77b5978cd0c4cd7af8c0d11645b09e232fb461bf3e20bd59a654bdda1e6e','2313a03ce7f074dc4e8e413382b6de0179ae6dc82986f18271044aff4e6f09ca');
INSERT INTO "events" VALUES(3,'discovery/schedule',3,'discovery/alpha/basic/2026-12-07/admit','occurrence-admitted','{"at":"2026-12-07T02:00:00.000Z","deadline":"2026-12-07T02:45:00.000Z","lane":"alpha/basic","occurrence":"discovery/alpha/basic/2026-12-07","runner":"r1"}','d51a4483ea96bbb1891345fae2029dbd06785dcf862eb8c8458806b58af70bb7','75679f979c517c0e5f45cc9ec80c9e6435b43d79d4464025e962d2940783b2eb','afdebb398e76c35121858e6b495a049aeed0733e895904460e07eae9fda446e9','93a19543174927c4ec764b5e01ee73e1051db6590ef29d9022552ab46f0cb72a');
INSERT INTO "events" VALUES(4,'discovery/schedule',4,'discovery/alpha/basic/2026-12-07/call/1','call-admitted','{"account":"claude","at":"2026-12-07T02:00:00.000Z","bound":150000,"call":1,"occurrence":"discovery/alpha/basic/2026-12-07","runner":"r1","signIn":"owner@example.com","task":"scan","week":"2026-W50","work":"w1"}','75679f979c517c0e5f45cc9ec80c9e6435b43d79d4464025e962d2940783b2eb','7564efdd57954e83e6e4ed31f4eeef50e3d2f35518935e1809066b35c8db65df','66d715745e35df3e4966c1747ad0b953c1b0a8eba250e2de641b3a6413605025','670de44a784e224d9d8ed8e4d2214f3a87bb623ef74916e14dab8a7d71a4af79');
INSERT INTO "events" VALUES(5,'discovery/schedule',5,'discovery/alpha/basic/2026-12-07/call/1/end','call-ended','{"at":"2026-12-07T02:00:00.000Z","call":1,"debit":900,"occurrence":"discovery/alpha/basic/2026-12-07","outcome":"ok","overage":false,"unknown":false}','7564efdd57954e83e6e4ed31f4eeef50e3d2f35518935e1809066b35c8db65df','e0a221bc9ceb08856afbe010ba381be26d888dd8a2c87ec9470f0646af23929b','3178c9f690f626303bdc2ce79536f971433ca94515bbd3dc121626601da50686','2dbbfd0b5c45b423f124067eb76cbbf613b22fc3cd9daf63739163238936b986');
CREATE TABLE journal_meta (
	"key" VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	PRIMARY KEY ("key")
);
INSERT INTO "journal_meta" VALUES('format','factory-schedule-journal/2');
CREATE TABLE leases (
	scope VARCHAR NOT NULL, 
	owner VARCHAR NOT NULL, 
	ttl_ms BIGINT NOT NULL, 
	acquired_ms BIGINT NOT NULL, 
	heartbeat_ms BIGINT NOT NULL, 
	info TEXT NOT NULL, 
	PRIMARY KEY (scope)
);
CREATE TABLE receipts (
	command_id VARCHAR NOT NULL, 
	aggregate VARCHAR NOT NULL, 
	digest VARCHAR NOT NULL, 
	first_version INTEGER NOT NULL, 
	last_version INTEGER NOT NULL, 
	result TEXT NOT NULL, 
	PRIMARY KEY (command_id)
);
INSERT INTO "receipts" VALUES('discovery/commission/1','discovery/schedule','5d8206118f05d07ffd900bc88cfcad75419dae4e86ab0aaa1faca194dd820cfb',1,1,'{"revision":1}');
INSERT INTO "receipts" VALUES('discovery/account/claude/1','discovery/schedule','39bdc6c0001cdd4271dc8bc481c3cff7cf24a9c1cc168297672629941f08ff03',2,2,'{"account":"claude","sequence":1}');
INSERT INTO "receipts" VALUES('discovery/alpha/basic/2026-12-07/admit','discovery/schedule','b2e96e1d236c97cb5d53e87adfcf69dd3b4214d942033eb458512d7602e87552',3,3,'{"kind":"admitted","occurrenceId":"discovery/alpha/basic/2026-12-07"}');
INSERT INTO "receipts" VALUES('discovery/alpha/basic/2026-12-07/call/1','discovery/schedule','2f8231a418a3223e05ec0d64f504a593a265bbb5dd37ecfb289e70b47fbf2568',4,4,'{"call":1,"occurrenceId":"discovery/alpha/basic/2026-12-07","week":"2026-W50"}');
INSERT INTO "receipts" VALUES('discovery/alpha/basic/2026-12-07/call/1/end','discovery/schedule','9f6cd538a131c9b3621e00558aca0d53d07c6f4acc29b72a2820d66b8eb89aa4',5,5,'{"call":1,"debit":900,"occurrenceId":"discovery/alpha/basic/2026-12-07","outcome":"ok"}');
CREATE INDEX ix_events_command_id ON events (command_id);
CREATE INDEX receipts_aggregate_last_version ON receipts (aggregate, last_version);
COMMIT;
