import { render } from 'preact'
import { App } from './app.js'
import './ui/ui.css'
import './console.css'

render(<App />, document.getElementById('app')!)
