// What a person sees in agent-chat-ui, checked without a browser.
//
// agent-chat-ui is a React shell around the JS SDK's `useStream`; `useStream` is a thin adapter
// over the SDK's framework-free `StreamOrchestrator` (thread, history, stream manager,
// branching). This harness drives that orchestrator with agent-chat-ui's own request shapes
// (src/components/thread/index.tsx, messages/human.tsx, providers/Thread.tsx at fdc87e6) and
// records the message list after every state change, as the UI would render it.
//
//   node harness.mjs --url http://127.0.0.1:8000 [--api-key KEY]
//
// Scenarios (each prints what it saw; the last line is a JSON summary; exit 1 on a failure):
//   conversation  two turns (a reminder, an analytics question): the list never loses a
//                 conversation message while a run streams, and ends as the thread's state
//   regenerate    regenerate the last answer: a new run of the agent that answered (its node
//                 runs again), a new message, "1 / 2" on it
//   edit          edit the last question: a branch switcher ("1 / 2") on the edited message,
//                 within the 10 checkpoints the UI reads, also after a reload
//   by-name       an agent's name as the Assistant ID: its threads are listed in the sidebar,
//                 and the no-model reply suggests what works in agent-chat-ui
//   chart         an analytics answer shows its chart: a markdown image whose signed link loads
//                 without the API key, with alt text; an altered link is refused
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { StreamOrchestrator } from "@langchain/langgraph-sdk/ui";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    "api-key": { type: "string" },
    only: { type: "string" },
  },
});
if (!args.url) {
  console.error("usage: node harness.mjs --url http://127.0.0.1:8000 [--api-key KEY]");
  process.exit(2);
}
const client = new Client({ apiUrl: args.url, apiKey: args["api-key"] });
// agent-chat-ui sends these with every submit (thread/index.tsx, messages/human.tsx)
const UI_SUBMIT = { streamMode: ["values"], streamSubgraphs: true, streamResumable: true };

const typeOf = (m) => m.type ?? m._getType?.() ?? "?";
const textOf = (m) =>
  typeof m.content === "string"
    ? m.content
    : (m.content ?? []).map((c) => (typeof c === "string" ? c : (c.text ?? ""))).join("");

/** One chat window: the orchestrator as `useStream` sets it up in agent-chat-ui. */
class ChatWindow {
  constructor(assistantId) {
    this.assistantId = assistantId;
    this.frames = []; // the message list after every change: [{id, type}]
    this.rootUpdates = []; // root-graph nodes reported by `updates` events of the last run
    this.orchestrator = new StreamOrchestrator(
      {
        fetchStateHistory: true, // agent-chat-ui: providers/Stream.tsx
        onCustomEvent: () => {}, // agent-chat-ui handles UI messages here (adds `custom`)
        onUpdateEvent: (data, { namespace }) => {
          if (!namespace) this.rootUpdates.push(...Object.keys(data ?? {}));
        },
      },
      {
        getClient: () => client,
        getAssistantId: () => this.assistantId,
        getMessagesKey: () => "messages",
      },
    );
    // useStream adds messages-tuple as soon as the UI reads `messages`, which it always does
    this.orchestrator.trackStreamMode("messages-tuple");
    this.orchestrator.subscribe(() => {
      const shown = this.orchestrator.messages.map((m) => ({ id: m.id, type: typeOf(m) }));
      const last = this.frames.at(-1);
      if (!last || JSON.stringify(last) !== JSON.stringify(shown)) this.frames.push(shown);
    });
  }

  get messages() {
    return this.orchestrator.messages;
  }

  metadataOf(message) {
    return this.orchestrator.getMessagesMetadata(message);
  }

  /** Submit as agent-chat-ui does, and return the frames this run produced. */
  async submit(values, options = {}) {
    const start = this.frames.length;
    this.rootUpdates = [];
    let failure;
    await this.orchestrator.submit(values, {
      ...UI_SUBMIT,
      ...options,
      onError: (error) => {
        failure = error;
      },
    });
    if (failure || this.orchestrator.error) {
      throw new Error(`the run failed: ${failure ?? this.orchestrator.error}`);
    }
    return this.frames.slice(start);
  }

  /** A reload: a new window on the same thread, once its history (10 checkpoints) is in. */
  static async reopen(assistantId, threadId) {
    const window = new ChatWindow(assistantId);
    const loaded = new Promise((resolve) => {
      const stop = window.orchestrator.subscribe(() => {
        const history = window.orchestrator.historyData;
        if (!history.isLoading && history.data) {
          stop();
          resolve();
        }
      });
    });
    window.orchestrator.setThreadId(threadId);
    await loaded;
    return window;
  }
}

/** agent-chat-ui's send box (thread/index.tsx handleSubmit). */
function humanMessage(text) {
  return { id: randomUUID(), type: "human", content: [{ type: "text", text }] };
}

async function send(window, text) {
  const message = humanMessage(text);
  const before = window.messages.map((m) => m.id);
  const frames = await window.submit(
    { messages: [message] },
    {
      optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), message] }),
    },
  );
  return { message, before, frames };
}

/** Frames in which a conversation message is missing: those shown before the run, the new
 * question once shown, and every message of the final answer once shown. */
function losses(frames, kept) {
  const seen = new Set();
  const lost = [];
  frames.forEach((frame, index) => {
    const ids = new Set(frame.map((m) => m.id));
    for (const id of kept) if (ids.has(id)) seen.add(id);
    const missing = [...seen].filter((id) => !ids.has(id));
    if (missing.length) lost.push({ frame: index, missing, shown: frame.length });
  });
  return lost;
}

function timeline(frames) {
  return frames.map((f) => f.map((m) => m.type[0]).join("")).join(" → ");
}

const results = {};
const failures = [];
function check(scenario, ok, what) {
  (results[scenario] ??= []).push({ ok, what });
  console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(`${scenario}: ${what}`);
}

async function stateIds(threadId) {
  const state = await client.threads.getState(threadId);
  return (state.values?.messages ?? []).map((m) => m.id);
}

// --- conversation ------------------------------------------------------------------------------
const ui = new ChatWindow("switchyard");
async function conversation() {
  console.log("conversation (assistant switchyard)");
  for (const text of [
    "Remind me to call Ada tomorrow at 9am, it is a high-priority task",
    "How many orders were placed last month?",
  ]) {
    const { message, before, frames } = await send(ui, text);
    const finalIds = await stateIds(ui.orchestrator.threadId);
    const kept = [...before, message.id, ...finalIds];
    const lost = losses(frames, kept);
    const by = ui.messages.at(-1)?.name ?? "?";
    console.log(`  "${text}" (answered by ${by}): ${frames.length} frames: ${timeline(frames)}`);
    check(
      "conversation",
      lost.length === 0,
      `no conversation message lost while the run streamed` +
        (lost.length ? ` (lost in ${lost.length} frames, e.g. ${JSON.stringify(lost[0])})` : ""),
    );
    const shown = ui.messages.map((m) => m.id);
    check(
      "conversation",
      JSON.stringify(shown) === JSON.stringify(finalIds),
      `the list ends as the thread's state (${shown.length} messages)`,
    );
  }
  const sidebar = await client.threads.search({ metadata: { graph_id: "switchyard" }, limit: 100 });
  check(
    "conversation",
    sidebar.some((t) => t.thread_id === ui.orchestrator.threadId),
    "the thread is listed in the sidebar (graph_id switchyard)",
  );
}

// --- regenerate --------------------------------------------------------------------------------
async function regenerate() {
  console.log("regenerate (the last answer)");
  const last = ui.messages.at(-1);
  const answeredBy = last.name;
  const parent = ui.metadataOf(last)?.firstSeenState?.parent_checkpoint;
  check("regenerate", parent != null, "the answer has a parent checkpoint to fork from");
  const frames = await ui.submit(undefined, { checkpoint: parent });
  console.log(`  ${frames.length} frames: ${timeline(frames)}; root nodes: ${ui.rootUpdates}`);
  check(
    "regenerate",
    ui.rootUpdates.includes(answeredBy),
    `the agent that answered (${answeredBy}) ran again`,
  );
  const again = ui.messages.at(-1);
  check("regenerate", again.id !== last.id && typeOf(again) === "ai", "a new answer is shown");
  const options = ui.metadataOf(again)?.branchOptions ?? [];
  check("regenerate", options.length >= 2, `the new answer offers ${options.length} branches`);
}

// --- edit --------------------------------------------------------------------------------------
async function edit() {
  console.log("edit (the last question)");
  const question = ui.messages.filter((m) => typeOf(m) === "human").at(-1);
  const meta = ui.metadataOf(question);
  const parent = meta?.firstSeenState?.parent_checkpoint;
  check("edit", parent != null, "the question has a parent checkpoint to fork from");
  const edited = { type: "human", content: "How many orders were placed last week?" };
  const frames = await ui.submit(
    { messages: [edited] },
    {
      checkpoint: parent,
      optimisticValues: (prev) => {
        const values = meta?.firstSeenState?.values;
        if (!values) return prev;
        return { ...values, messages: [...(values.messages ?? []), edited] };
      },
    },
  );
  console.log(`  ${frames.length} frames: ${timeline(frames)}`);
  const switcher = (window) => {
    const human = window.messages.filter((m) => typeOf(m) === "human").at(-1);
    return {
      text: textOf(human),
      options: window.metadataOf(human)?.branchOptions ?? [],
    };
  };
  const now = switcher(ui);
  check("edit", now.text.includes("last week"), "the edited question is shown");
  check("edit", now.options.length >= 2, `the edited question offers ${now.options.length} branches`);
  const reloaded = await ChatWindow.reopen("switchyard", ui.orchestrator.threadId);
  const after = switcher(reloaded);
  check(
    "edit",
    after.options.length >= 2 && after.text.includes("last week"),
    `after a reload too (${after.options.length} branches, history of ${reloaded.orchestrator.historyData.data.length} checkpoints)`,
  );
}

// --- by name -----------------------------------------------------------------------------------
async function byName() {
  console.log("by-name (assistant analytics, then switchyard without a model)");
  const analytics = new ChatWindow("analytics");
  await send(analytics, "How many orders were placed last month?");
  const sidebar = await client.threads.search({ metadata: { graph_id: "analytics" }, limit: 100 });
  check(
    "by-name",
    sidebar.some((t) => t.thread_id === analytics.orchestrator.threadId),
    `the analytics thread is listed in the sidebar for Assistant ID analytics (${sidebar.length} listed)`,
  );
  check(
    "by-name",
    !sidebar.some((t) => t.thread_id === ui.orchestrator.threadId),
    "the switchyard conversation is not listed there",
  );
  const chat = new ChatWindow("switchyard");
  await send(chat, "hello, who are you?");
  const reply = textOf(chat.messages.at(-1));
  if (reply.includes("No language model is configured")) {
    check(
      "by-name",
      !reply.includes("POST /chat") && reply.includes("assistant id"),
      "the no-model reply suggests an assistant id, not POST /chat",
    );
  }
}

// --- chart -------------------------------------------------------------------------------------
// agent-chat-ui renders an AI message's text as markdown (react-markdown, whose default URL
// transform keeps http(s) links only) and a browser loads an image with a plain GET: no API key.
async function chart() {
  console.log("chart (an analytics answer's chart as agent-chat-ui shows it)");
  const analytics = new ChatWindow("analytics");
  await send(analytics, "Revenue by region in 2025");
  const text = textOf(analytics.messages.at(-1));
  const image = /!\[([^\]]*)\]\(([^)\s]+)\)/.exec(text);
  check("chart", image != null, "the answer holds a markdown image");
  if (!image) return;
  const [, alt, url] = image;
  console.log(`  image: ![${alt.slice(0, 60)}...](${url.slice(0, 80)}...)`);
  check("chart", alt.trim().length > 20, "its alt text describes the chart for screen readers");
  // agent-chat-ui draws markdown images as small thumbnails: the image links to itself
  check("chart", text.includes(`[![${alt}](${url})](${url})`), "a click opens it at full size");
  check("chart", /^https?:\/\//.test(url), "its URL survives react-markdown's URL filter (http/https)");
  const response = await fetch(url); // what an <img> does: no X-API-Key, no Authorization
  const bytes = new Uint8Array(await response.arrayBuffer());
  const png = bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;
  check(
    "chart",
    response.status === 200 && response.headers.get("content-type") === "image/png" && png,
    `the image loads without the API key (${response.status}, ${bytes.length} bytes)`,
  );
  const forged = await fetch(url.replace(/signature=[^&]+/, "signature=forged"));
  check("chart", forged.status === 403, `an altered link is refused (${forged.status})`);
}

const scenarios = { conversation, regenerate, edit, "by-name": byName, chart };
for (const [name, run] of Object.entries(scenarios)) {
  if (args.only && !args.only.split(",").includes(name)) continue;
  try {
    await run();
  } catch (error) {
    check(name, false, `raised: ${error?.stack ?? error}`);
  }
}
console.log(JSON.stringify({ ok: failures.length === 0, failures, results }));
process.exit(failures.length === 0 ? 0 : 1);
