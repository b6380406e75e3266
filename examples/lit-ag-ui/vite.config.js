// The AG-UI server: the scripted one of ./server is mounted at /agent on the dev server
// (and on `vite preview`), so the page's HttpAgent talks to the same origin. A real
// deployment points HttpAgent at its own agent.
import { agUiHandler } from './server/ag-ui-server.mjs'
import { scriptedModel } from './server/model.mjs'

const agent = agUiHandler(scriptedModel)

export default {
  // Pre-bundled up front, so the dev server never finds one late and reloads the page
  // during its first conversation.
  optimizeDeps: { include: ['lit', '@ag-ui/client', 'toolhost', 'toolhost/ag-ui', 'toolhost/lit'] },
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
