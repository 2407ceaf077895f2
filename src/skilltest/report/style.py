"""The HTML report's stylesheet, inline in every page (the page loads nothing else).

System fonts only (no web font is fetched); one accent colour per meaning (good, warn, bad,
plain) shared by verdicts, outcomes and checks; a layout that reads at 1280 px with the prompt
beside what is expected and each arm's runs side by side, and stacks into one column below
760 px, where wide tables scroll within their own box rather than the page.
"""

STYLE = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--bg:#f2f4f7;--card:#fff;
--good:#1a7f37;--good-bg:#dafbe1;--warn:#8a5a00;--warn-bg:#fff4c2;--bad:#c2222d;
--bad-bg:#ffebe9;--plain:#4d5661;--plain-bg:#eaeef2;--accent:#0969da;--user:#ddf0ff;
--mono:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);
font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.page{max-width:1200px;margin:0 auto;padding:28px 24px 64px;overflow-wrap:break-word}
h1{font-size:1.7rem;line-height:1.2;margin:0;letter-spacing:-.01em}
h2{font-size:1.35rem;line-height:1.3;margin:0 0 .5rem}
h3{font-size:1.08rem;line-height:1.35;margin:0}
h4{font-size:.75rem;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);
margin:0 0 .5rem}
p{margin:.4rem 0}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre{font-family:var(--mono);font-size:.84em}
code{background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:1px .35em;
word-break:break-all;box-decoration-break:clone;-webkit-box-decoration-break:clone;
line-height:1.9}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2rem 0}
.panel{background:var(--card);border:1px solid var(--line);border-radius:12px;
padding:20px 24px;margin:0 0 20px}
.title-row{display:flex;flex-wrap:wrap;align-items:center;gap:10px 14px}
.badge{display:inline-block;border-radius:999px;padding:3px 12px;font-size:.85rem;
font-weight:700;letter-spacing:.02em}
.badge.offline{background:var(--warn-bg);color:var(--warn);border:1px solid #d4a72c}
.badge.live{background:var(--good-bg);color:var(--good);border:1px solid #8ddb9f}
.suites{color:var(--muted);margin:.6rem 0 0}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:14px 28px;
margin:18px 0 0}
.fact dt{font-size:.72rem;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
.fact dd{margin:2px 0 0;font-weight:600;overflow-wrap:anywhere}
.fact .sub{display:block;font-weight:400;font-size:.82rem;color:var(--muted)}
.offline{font-size:1.02rem;font-weight:600;background:var(--warn-bg);border:2px solid #d4a72c;
border-radius:8px;padding:.7em 1em;margin:18px 0 0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(290px,1fr));gap:16px;
margin:0 0 20px}
.card{background:var(--card);border:1px solid var(--line);border-top:5px solid var(--good);
border-radius:12px;padding:16px 20px}
.card.failing{border-top-color:var(--bad)}
.card h3{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em}
.card .big{font-size:1.5rem;font-weight:700;margin:.2rem 0 .5rem}
.card .big .failing{font-size:.95rem;color:var(--bad);font-weight:600;margin-left:.4rem}
.card .chips{display:flex;flex-wrap:wrap;gap:6px;margin:0 0 .8rem}
.figures{display:grid;grid-template-columns:auto 1fr;gap:4px 14px;margin:0;font-size:.9rem}
.figures dt{color:var(--muted)}.figures dd{margin:0;font-weight:600}
.chip{display:inline-block;border-radius:999px;padding:1px 10px;font-size:.8rem;
font-weight:600;line-height:1.65;white-space:nowrap;font-family:inherit}
.chip.good{background:var(--good-bg);color:var(--good)}
.chip.warn{background:var(--warn-bg);color:var(--warn)}
.chip.bad{background:var(--bad-bg);color:var(--bad)}
.chip.plain{background:var(--plain-bg);color:var(--plain)}
.howto>summary{font-size:1.1rem;font-weight:700;cursor:pointer;margin-bottom:.6rem}
.howto .prose{columns:2 30em;column-gap:36px;color:#333b44}
.howto .prose p{margin:0 0 .6rem;break-inside:avoid}
.legend{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:8px 32px}
.legend dl{display:grid;grid-template-columns:max-content 1fr;gap:6px 12px;margin:0;
font-size:.9rem}
.legend dd{margin:0;color:#333b44}
.layer{margin-top:32px}
.layer>.panel>h2{display:flex;align-items:baseline;gap:12px}
.counts{font-weight:600}.note{color:var(--muted);font-size:.9rem}
.warning{background:var(--warn-bg);border-radius:6px;padding:.4em .8em}
.scroll{overflow-x:auto;margin:.6rem 0}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{border-bottom:1px solid var(--line);padding:6px 10px;text-align:left;vertical-align:top}
th{font-size:.8rem;color:var(--muted);background:var(--soft);font-weight:600}
td.fig{white-space:nowrap}table.verdicts td:last-child{min-width:12em}
table.arms td:nth-child(-n+2){white-space:nowrap}
tr.failed td:first-child{box-shadow:inset 4px 0 var(--bad)}
tr.passed td:first-child{box-shadow:inset 4px 0 var(--good)}
.produced>summary{cursor:pointer;color:var(--muted);font-size:.9rem}
table.provenance{table-layout:fixed}table.provenance th{width:9em}
table.provenance td,table.provenance caption{overflow-wrap:anywhere}
table.provenance caption{text-align:left;font-weight:600;padding:6px 0}
svg{max-width:100%;height:auto;font-family:inherit}
svg .plot-title{font-size:12px;font-weight:600}svg .tick{font-size:10px;text-anchor:middle}
svg .label{font-size:11px;text-anchor:end}svg .value{font-size:11px}
svg .grid{stroke:#d0d7de}svg .zero{stroke:#57606a}
svg .up{stroke:#1a7f37;fill:#1a7f37}svg .down{stroke:#b42318;fill:#b42318}
svg .flat{stroke:#57606a;fill:#57606a}svg line.up,svg line.down,svg line.flat{stroke-width:2}
svg .track{fill:#eaeef2}svg .bar{fill:#0969da}
.scenario{background:var(--card);border:1px solid var(--line);border-radius:12px;
padding:18px 22px;margin:16px 0}
details.about>summary{cursor:pointer}
.scenario h3{display:inline-flex;flex-wrap:wrap;align-items:center;gap:8px 12px;
vertical-align:middle}
.scenario h3 .name{font-family:var(--mono);font-size:.95rem}
.scenario .title{color:var(--muted);margin:.2rem 0 0}
ul.reasons{margin:.6rem 0;padding-left:1.2rem;color:#333b44}
.scenario-grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px 28px;
margin:14px 0}
.turn{margin:0 0 10px}
.who{display:block;font-size:.72rem;text-transform:uppercase;letter-spacing:.06em;
color:var(--accent);font-weight:700;margin-bottom:3px}
blockquote.prompt{margin:0;padding:10px 14px;background:var(--user);border-left:4px solid
var(--accent);border-radius:0 8px 8px 0;white-space:pre-wrap;overflow-wrap:anywhere}
dl.expect{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:6px 14px;margin:0;
font-size:.9rem}
dl.expect dt{color:var(--muted)}dl.expect dd{margin:0}
table.checks{margin:.6rem 0}.checks-head{margin-top:.9rem}
table.checks .check-name,table.checks .note{overflow-wrap:anywhere}
table.checks .chip{margin:1px 0}
.check-name{font-weight:600}.run-body .source{overflow-wrap:anywhere}
.outcome{margin-top:16px}
.charts{display:flex;flex-wrap:wrap;gap:8px 24px}
.runs{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(340px,100%),1fr));
gap:4px 20px;margin-top:12px;align-items:start}.runs>div{min-width:0}
details.run{border:1px solid var(--line);border-radius:8px;margin:6px 0;background:#fff}
details.run>summary{cursor:pointer;padding:7px 12px;font-weight:600}
details.run[open]>summary{border-bottom:1px solid var(--line);background:var(--soft)}
details.run .arm{color:var(--fg)}
.meta{color:var(--muted);font-weight:400;font-size:.85rem;margin-left:.3rem}
.run-body{padding:8px 14px 12px}
.timeline{list-style:none;padding:0;margin:.5rem 0}
.timeline li{margin:6px 0;padding:6px 10px;border-left:4px solid #8c959f;background:var(--soft);
border-radius:0 6px 6px 0}
.timeline .user{border-color:var(--accent);background:var(--user)}
.timeline .assistant{border-color:var(--good)}
.timeline .tool{border-color:#8250df}.timeline .result{border-color:#bf8700}
.timeline .skill{border-color:#8c959f;color:var(--muted)}
.timeline .http{border-color:#57606a}
.timeline .error{border-color:var(--bad);background:var(--bad-bg)}
.kind{display:block;font-size:.72rem;text-transform:uppercase;letter-spacing:.05em;
font-weight:700;color:var(--muted)}
.timeline .user .kind{color:var(--accent)}
.timeline .user pre,.timeline .assistant pre{font-family:inherit;font-size:.93rem}
[hidden]{display:none!important}
.script-note{display:none}
@media (scripting:enabled){.script-note{display:block;background:var(--warn-bg);
border:1px solid #d4a72c;border-radius:8px;padding:.6em 1em;margin:0 0 20px}}
html.scripted .script-note{display:none}
.finder{display:flex;flex-wrap:wrap;align-items:center;gap:8px 20px;margin:.8rem 0;
padding:10px 14px;background:var(--soft);border:1px solid var(--line);border-radius:8px}
.finder fieldset{display:flex;flex-wrap:wrap;align-items:center;gap:6px 14px;border:0;
margin:0;padding:0}
.finder legend{float:left;color:var(--muted);font-size:.9rem;margin-right:4px}
.finder label{white-space:nowrap}.finder input[type=checkbox]{margin:0 5px 0 0}
.finder input[type=search]{font:inherit;padding:3px 8px;border:1px solid var(--line);
border-radius:6px;min-width:12em;margin-left:4px}
.finder button{font:inherit;font-size:.9rem;padding:3px 12px;border:1px solid var(--line);
border-radius:6px;background:var(--card);cursor:pointer}
.finder .shown{margin:0;color:var(--muted);font-size:.9rem}
.shared .shared-text>summary,details.plot>summary{cursor:pointer;font-weight:600}
@media (max-width:760px){
.page{padding:16px 10px 40px}.panel,.scenario{padding:14px 14px;border-radius:10px}
h1{font-size:1.4rem}.scenario-grid{grid-template-columns:minmax(0,1fr)}
.facts{grid-template-columns:1fr 1fr;gap:10px 16px}
.cards,.legend,.runs,dl.expect{grid-template-columns:minmax(0,1fr)}
dl.expect{gap:2px}dl.expect dd{margin-bottom:8px}
.chip,table.arms td:nth-child(-n+2){white-space:normal}
.finder label.find{white-space:normal;flex:1 1 100%}
.finder input[type=search]{display:block;width:100%;min-width:0;margin:4px 0 0}
}
"""
