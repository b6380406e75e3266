// The AG-UI server: the scripted one of ./server is mounted at /agent on the dev server
// (and on `vite preview`), so the page's HttpAgent talks to the same origin. A real
// deployment points HttpAgent at its own agent.
import { agUiHandler } from './server/ag-ui-server.mjs'
import { scriptedModel } from './server/model.mjs'

const agent = agUiHandler(scriptedModel)

export default {
  plugins: [
    {
      name: 'scripted-ag-ui-agent',
      configureServer(server) {
        server.middlewares.use('/agent', agent)
      },
      configurePreviewServer(server) {
        server.middlewares.use('/agent', agent)
      },
    },
  ],
}
