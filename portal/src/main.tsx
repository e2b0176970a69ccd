import { render } from 'preact'
import { App } from './app.js'
import './portal.css'

render(<App />, document.getElementById('app')!)
