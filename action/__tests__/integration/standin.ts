/**
 * A real local HTTP server that stands in for the parts of GitHub the action talks to, and
 * records every request it gets:
 *
 * - the REST API (GITHUB_API_URL): issue comments and run artifacts (paginated with Link
 *   headers), `GET /user`, workflow runs, the artifact download (a 302 to a zip), releases;
 * - plain downloads: release assets and artifact zips behind the 302.
 *
 * IMITATION OF A MOVING INTERFACE: the results service (ACTIONS_RESULTS_URL: twirp JSON
 * `CreateArtifact`/`FinalizeArtifact`, then Azure-style block blob PUTs to the signed URL) is
 * undocumented and internal to GitHub. This stand-in answers just enough of what
 * @actions/artifact 6 sends to store the uploaded zip, so a later run can download it through
 * the REST API. When @actions/artifact changes what it sends, change this and nothing else.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Recorded {
  method: string
  /** Path and query, as sent. */
  url: string
  body: string
}

export interface Comment {
  id: number
  body: string
  user: { login: string; type: string }
}

export interface Run {
  id: number
  run_number: number
  event: string
  status: string
  conclusion: string
  head_branch: string
  head_sha: string
  created_at: string
  html_url: string
  head_repository: { full_name: string }
}

export interface StoredArtifact {
  id: number
  name: string
  runId: number
  zip: Buffer
  expired: boolean
}

/**
 * A failure the stand-in answers instead of the route, to the next `times` requests whose
 * method and path match, as GitHub answers in a bad minute (a 502, a rate limit).
 */
export interface Fault {
  method: string
  path: RegExp
  status: number
  /** `message` of the JSON body, as GitHub's errors have one. */
  message?: string
  headers?: Record<string, string>
  times: number
}

export class StandIn {
  readonly requests: Recorded[] = []
  readonly comments = new Map<number, Comment[]>()
  readonly runs: Run[] = []
  readonly artifacts: StoredArtifact[] = []
  /** tag -> asset name -> bytes */
  readonly releases = new Map<string, Map<string, Buffer>>()
  /** Answer 403 to comment writes, as GitHub does for a fork's read-only token. */
  forbidCommentWrites = false
  /** Failures to answer first (`fail`). */
  readonly faults: Fault[] = []
  url = ''

  private server: Server = createServer((req, res) => {
    void this.handle(req, res)
  })
  private nextId = 1000
  /** blob path -> block id -> bytes (the imitation blob store) */
  private blocks = new Map<string, Map<string, Buffer>>()
  private blobs = new Map<string, Buffer>()

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  /** Requests since index `from`, as `METHOD path` without the query. */
  calls(from = 0): string[] {
    return this.requests.slice(from).map((r) => `${r.method} ${r.url.split('?')[0]}`)
  }

  /** Answers the next `f.times` requests that match `f` with its status instead. */
  fail(f: Fault): void {
    this.faults.push({ ...f })
  }

  addRun(run: Partial<Run> & { id: number }): Run {
    const full: Run = {
      run_number: run.id,
      event: 'push',
      status: 'completed',
      conclusion: 'success',
      head_branch: 'main',
      head_sha: `${run.id}`.padEnd(40, 'a'),
      created_at: new Date(Date.UTC(2026, 0, 1) + run.id * 60_000).toISOString(),
      html_url: `https://github.com/octo/shop/actions/runs/${run.id}`,
      head_repository: { full_name: 'octo/shop' },
      ...run
    }
    this.runs.push(full)
    return full
  }

  private id(): number {
    return this.nextId++
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks)
    const url = new URL(req.url ?? '/', this.url)
    const method = req.method ?? 'GET'
    const isBlob = url.pathname.startsWith('/devstoreaccount1/')
    this.requests.push({ method, url: url.pathname + url.search, body: isBlob ? `<${raw.length} bytes>` : raw.toString() })
    const fault = this.faults.find((f) => f.times > 0 && f.method === method && f.path.test(url.pathname))
    if (fault) {
      fault.times -= 1
      res.setHeader('x-github-request-id', 'stand-in-fault')
      for (const [name, value] of Object.entries(fault.headers ?? {})) res.setHeader(name, value)
      return json(res, fault.status, { message: fault.message ?? `stand-in fault ${fault.status}` })
    }
    try {
      this.route(method, url, raw, res)
    } catch (error) {
      json(res, 500, { message: String(error) })
    }
  }

  private route(method: string, url: URL, raw: Buffer, res: ServerResponse): void {
    const p = url.pathname
    let m: RegExpMatchArray | null

    // --- REST API -------------------------------------------------------------------------
    if ((m = p.match(/^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/))) {
      const issue = Number(m[1])
      const list = this.comments.get(issue) ?? []
      if (method === 'GET') {
        const perPage = Number(url.searchParams.get('per_page') ?? 30)
        const page = Number(url.searchParams.get('page') ?? 1)
        this.linkNext(url, page, Math.ceil(list.length / perPage), res)
        return json(res, 200, list.slice((page - 1) * perPage, page * perPage).map((c) => this.commentJson(issue, c)))
      }
      if (method === 'POST') {
        if (this.forbidCommentWrites) return forbidden(res)
        const c: Comment = { id: this.id(), body: JSON.parse(raw.toString()).body, user: { login: 'github-actions[bot]', type: 'Bot' } }
        list.push(c)
        this.comments.set(issue, list)
        return json(res, 201, this.commentJson(issue, c))
      }
    }
    if ((m = p.match(/^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/)) && method === 'PATCH') {
      if (this.forbidCommentWrites) return forbidden(res)
      for (const [issue, list] of this.comments) {
        const c = list.find((x) => x.id === Number(m![1]))
        if (c) {
          c.body = JSON.parse(raw.toString()).body
          return json(res, 200, this.commentJson(issue, c))
        }
      }
      return json(res, 404, { message: 'Not Found' })
    }
    if (p === '/user' && method === 'GET') {
      // What an installation token (the workflow token) gets.
      return forbidden(res)
    }
    if ((m = p.match(/^\/repos\/[^/]+\/[^/]+\/actions\/workflows\/([^/]+)\/runs$/)) && method === 'GET') {
      const q = url.searchParams
      const runs = this.runs
        .filter((r) => !q.get('branch') || r.head_branch === q.get('branch'))
        .filter((r) => !q.get('event') || r.event === q.get('event'))
        .filter((r) => q.get('status') !== 'success' || r.conclusion === 'success')
        .sort((a, b) => b.id - a.id)
      return json(res, 200, { total_count: runs.length, workflow_runs: runs })
    }
    if ((m = p.match(/^\/repos\/[^/]+\/[^/]+\/actions\/runs\/(\d+)\/artifacts$/)) && method === 'GET') {
      const name = url.searchParams.get('name')
      const arts = this.artifacts
        .filter((a) => a.runId === Number(m![1]) && (!name || a.name === name))
        .map((a) => ({ id: a.id, name: a.name, expired: a.expired, size_in_bytes: a.zip.length }))
      const perPage = Number(url.searchParams.get('per_page') ?? 30)
      const page = Number(url.searchParams.get('page') ?? 1)
      this.linkNext(url, page, Math.ceil(arts.length / perPage), res)
      return json(res, 200, { total_count: arts.length, artifacts: arts.slice((page - 1) * perPage, page * perPage) })
    }
    if ((m = p.match(/^\/repos\/[^/]+\/[^/]+\/actions\/artifacts\/(\d+)\/zip$/)) && method === 'GET') {
      const a = this.artifacts.find((x) => x.id === Number(m![1]))
      if (!a) return json(res, 404, { message: 'Not Found' })
      res.writeHead(302, { location: `${this.url}/artifact-blobs/${a.id}.zip?sig=imitation` })
      return void res.end()
    }
    if ((m = p.match(/^\/artifact-blobs\/(\d+)\.zip$/)) && method === 'GET') {
      const a = this.artifacts.find((x) => x.id === Number(m![1]))
      if (!a) return json(res, 404, { message: 'Not Found' })
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': a.zip.length })
      return void res.end(a.zip)
    }
    if ((m = p.match(/^\/repos\/[^/]+\/[^/]+\/releases\/tags\/([^/]+)$/)) && method === 'GET') {
      const tag = decodeURIComponent(m[1])
      const assets = this.releases.get(tag)
      if (!assets) return json(res, 404, { message: 'Not Found' })
      return json(res, 200, {
        tag_name: tag,
        assets: [...assets.keys()].map((name, i) => ({
          id: i + 1,
          name,
          browser_download_url: `${this.url}/release-downloads/${encodeURIComponent(tag)}/${encodeURIComponent(name)}`
        }))
      })
    }
    if ((m = p.match(/^\/release-downloads\/([^/]+)\/([^/]+)$/)) && method === 'GET') {
      const data = this.releases.get(decodeURIComponent(m[1]))?.get(decodeURIComponent(m[2]))
      if (!data) return json(res, 404, { message: 'Not Found' })
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length })
      return void res.end(data)
    }

    // --- results service: IMITATION (see the top of this file) -----------------------------
    if (p === '/twirp/github.actions.results.api.v1.ArtifactService/CreateArtifact' && method === 'POST') {
      const r = JSON.parse(raw.toString())
      return json(res, 200, {
        ok: true,
        signed_upload_url: `${this.url}/devstoreaccount1/artifacts/${r.workflow_run_backend_id}/${encodeURIComponent(r.name)}.zip?sig=imitation`
      })
    }
    if (p === '/twirp/github.actions.results.api.v1.ArtifactService/FinalizeArtifact' && method === 'POST') {
      const r = JSON.parse(raw.toString())
      const blobPath = `/devstoreaccount1/artifacts/${r.workflow_run_backend_id}/${encodeURIComponent(r.name)}.zip`
      const zip = this.blobs.get(blobPath)
      if (!zip) return json(res, 404, { code: 'not_found', msg: `no blob uploaded at ${blobPath}` })
      const runId = Number(String(r.workflow_run_backend_id).replace(/^run-/, ''))
      const artifact: StoredArtifact = { id: this.id(), name: r.name, runId, zip, expired: false }
      this.artifacts.push(artifact)
      return json(res, 200, { ok: true, artifact_id: String(artifact.id) })
    }
    if (p.startsWith('/devstoreaccount1/') && method === 'PUT') {
      const comp = url.searchParams.get('comp')
      if (comp === 'block') {
        const blocks = this.blocks.get(p) ?? new Map<string, Buffer>()
        blocks.set(url.searchParams.get('blockid') ?? '', raw)
        this.blocks.set(p, blocks)
      } else if (comp === 'blocklist') {
        const ids = [...raw.toString().matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)<\//g)].map((x) => x[1])
        const blocks = this.blocks.get(p) ?? new Map<string, Buffer>()
        this.blobs.set(p, Buffer.concat(ids.map((id) => blocks.get(id) ?? Buffer.alloc(0))))
      } else {
        this.blobs.set(p, raw)
      }
      res.writeHead(201, {
        etag: '"0x1"',
        'last-modified': new Date().toUTCString(),
        'x-ms-request-id': 'imitation',
        'x-ms-version': '2025-01-05',
        'x-ms-request-server-encrypted': 'true'
      })
      return void res.end()
    }

    json(res, 404, { message: `Not Found (the stand-in does not know ${method} ${p})` })
  }

  /** The `link` header of page `page` of `pages`, as GitHub sends it when there is a next page. */
  private linkNext(url: URL, page: number, pages: number, res: ServerResponse): void {
    if (page >= pages) return
    const next = new URL(url)
    next.searchParams.set('page', String(page + 1))
    const last = new URL(url)
    last.searchParams.set('page', String(pages))
    res.setHeader('link', `<${next.href}>; rel="next", <${last.href}>; rel="last"`)
  }

  private commentJson(issue: number, c: Comment) {
    return { ...c, html_url: `https://github.com/octo/shop/pull/${issue}#issuecomment-${c.id}` }
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function forbidden(res: ServerResponse): void {
  json(res, 403, {
    message: 'Resource not accessible by integration',
    documentation_url: 'https://docs.github.com/rest',
    status: '403'
  })
}
