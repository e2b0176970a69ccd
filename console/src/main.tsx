import { render } from 'preact'
import { describeError } from './api.js'
import { App } from './app.js'
import { DescribeError } from './ui/error-words.js'
import './ui/ui.css'
import './console.css'

// ui/ says failed calls as the console's API does (a 403 names what the root key lacks): ui/ imports no API client.
render(
  <DescribeError.Provider value={describeError}>
    <App />
  </DescribeError.Provider>,
  document.getElementById('app')!,
)
